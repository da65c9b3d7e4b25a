import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { callApi, createCategory, createTenant, recordBody } from '../../lib/tenant.js';
import type { PartResult } from '../../lib/results.js';
import { onFreshDatabase, postgresPartResult, type PostgresPartOptions } from '../part-run.js';

/** The file downloaded: the largest an attachment may be by default (WO_ATTACHMENT_MAX_BYTES). */
const FILE_BYTES = 25 * 1024 * 1024;
/** Rounds of each way of reading it, alternated so that the machine's drift falls on both alike. */
const ROUNDS = 7;
/**
 * Reads of the file in each round, one after the other: one 25 MiB read lasts 30 to 80 ms here, short
 * enough that a scheduling hiccup on the two shared cores swung a single read's rate threefold.
 */
const READS_PER_ROUND = 4;
const TARGET_RATIO = 0.5;

const execFileAsync = promisify(execFile);

/** curl, when this machine has it: the HTTP client that costs least on the two cores the service shares. */
async function curlAvailable(): Promise<boolean> {
  return execFileAsync('curl', ['--version']).then(
    () => true,
    () => false,
  );
}

/**
 * Issue 48 item 5: one 25 MiB attachment downloaded over HTTP from one API process, against a plain
 * `pg` read of the same chunk rows in binary (one COPY … (FORMAT binary) of all of them, no HTTP), and
 * a plain `pg` SELECT of them (the hex text format the service read before). Medians of alternating
 * rounds, in MB/s (10^6 bytes). The download is read by curl when the machine has it (its own timing,
 * from the request to the last byte), else by fetch: the client shares the two cores with the service
 * and PostgreSQL, and fetch spent about a third more CPU per byte than curl (session 38), so the
 * HTTP figure measured the client as much as the service. fetch's figure is kept beside it.
 */
export async function runPostgresDownloadsPart(_options: PostgresPartOptions): Promise<PartResult> {
  return onFreshDatabase(async (run) => {
    const { deployment, database } = run;
    const tenant = await createTenant(deployment.dataDir, undefined, deployment.env);
    await deployment.start({ apiProcesses: 1, workers: 0 });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const baseUrl = deployment.api.baseUrl;
      const categoryId = await createCategory(baseUrl, tenant);
      const record = await callApi<{ id: string }>(baseUrl, tenant, 'POST', '/api/v1/records', JSON.parse(recordBody(categoryId, 1)));
      const file = Buffer.concat([Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex'), randomBytes(FILE_BYTES - 20)]);
      const uploaded = await fetch(`${baseUrl}/api/v1/records/${record.body.id}/attachments?filename=big.jpg`, { method: 'POST', headers: { ...tenant.readHeaders, 'content-type': 'image/jpeg' }, body: file });
      if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}: ${await uploaded.text()}`);
      const attachmentId = ((await uploaded.json()) as { id: string }).id;
      const id = pg.escapeLiteral(attachmentId);

      const http = async () => {
        const response = await fetch(`${baseUrl}/api/v1/records/${record.body.id}/attachments/${attachmentId}/content`, { headers: tenant.readHeaders });
        let bytes = 0;
        const reader = response.body!.getReader();
        for (let piece = await reader.read(); !piece.done; piece = await reader.read()) bytes += piece.value.length;
        return bytes;
      };
      const url = `${baseUrl}/api/v1/records/${record.body.id}/attachments/${attachmentId}/content`;
      // READS_PER_ROUND downloads on one connection, each timed by curl from its request to its last byte.
      const curl = async () => {
        const transfers = Array.from({ length: READS_PER_ROUND }, () => ['-o', '/dev/null', url]).flat();
        const { stdout } = await execFileAsync('curl', ['-s', '-w', '%{http_code} %{size_download} %{time_total}\\n', '-H', `authorization: ${tenant.readHeaders.authorization}`, ...transfers]);
        let [bytes, seconds] = [0, 0];
        for (const line of stdout.trim().split('\n')) {
          const [status, size, time] = line.split(' ');
          if (status !== '200' || Number(size) !== FILE_BYTES) throw new Error(`curl's download answered ${status} with ${size} bytes`);
          [bytes, seconds] = [bytes + Number(size), seconds + Number(time)];
        }
        return { bytes, seconds };
      };
      const binaryCopy = async () => {
        let bytes = 0;
        const stream = client.query(copyStreams.to(`COPY (SELECT bytes FROM attachment_chunks WHERE attachment_id = ${id} ORDER BY n) TO STDOUT (FORMAT binary)`));
        for await (const piece of stream) bytes += (piece as Buffer).length;
        return bytes;
      };
      const hexSelect = async () => {
        let bytes = 0;
        const { rows } = await client.query<{ n: number }>(`SELECT n FROM attachment_chunks WHERE attachment_id = ${id} ORDER BY n`);
        for (const { n } of rows) bytes += (await client.query<{ bytes: Buffer }>('SELECT bytes FROM attachment_chunks WHERE attachment_id = $1 AND n = $2', [attachmentId, n])).rows[0]!.bytes.length;
        return bytes;
      };
      const timed = (read: () => Promise<number>) => async () => {
        let bytes = 0;
        const started = process.hrtime.bigint();
        for (let i = 0; i < READS_PER_ROUND; i++) {
          const read1 = await read();
          if (read !== binaryCopy && read1 !== FILE_BYTES) throw new Error(`a read gave ${read1} bytes, not ${FILE_BYTES}`);
          bytes += read1;
        }
        return { bytes, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
      };
      const withCurl = await curlAvailable();
      const ways = { ...(withCurl ? { curl } : {}), http: timed(http), binaryCopy: timed(binaryCopy), hexSelect: timed(hexSelect) };
      const rates: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, read] of Object.entries(ways) as [string, () => Promise<{ bytes: number; seconds: number }>][]) {
          const { seconds } = await read();
          rates[name]!.push((READS_PER_ROUND * FILE_BYTES) / 1e6 / seconds);
        }
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
      const [fetchRate, copyRate, hexRate] = [median(rates.http!), median(rates.binaryCopy!), median(rates.hexSelect!)];
      const httpRate = withCurl ? median(rates.curl!) : fetchRate;
      const reader = withCurl ? 'curl' : 'fetch';
      // The ratio of each round (its download against its own binary read, moments apart), then their median:
      // the machine's drift over the part moved both rates alike, so it cancels within a round.
      const httpRates = withCurl ? rates.curl! : rates.http!;
      const ratio = median(httpRates.map((rate, round) => rate / rates.binaryCopy![round]!));
      const round1 = (value: number) => Math.round(value * 10) / 10;
      return postgresPartResult('downloads', run.server, {
        measurements: [
          { name: `download 25 MiB over HTTP (1 API process), read by ${reader}`, value: round1(httpRate), unit: 'MB/s', ratio: Math.round(ratio * 100) / 100 },
          ...(withCurl ? [{ name: 'the same download read by fetch', value: round1(fetchRate), unit: 'MB/s', ratio: Math.round(median(rates.http!.map((rate, round) => rate / rates.binaryCopy![round]!)) * 100) / 100 }] : []),
          { name: 'plain pg: one COPY (FORMAT binary) of the same chunk rows', value: round1(copyRate), unit: 'MB/s' },
          { name: 'plain pg: SELECT of each chunk (hex text format)', value: round1(hexRate), unit: 'MB/s' },
        ],
        memory: deployment.memory('1 API process'),
        targets: [{ target: `a 25 MiB download (read by ${reader}) reaches ≥ ${TARGET_RATIO} × a plain pg binary read of the same rows`, actual: `${ratio.toFixed(2)}, the median round's (medians ${round1(httpRate)} / ${round1(copyRate)} MB/s)`, pass: ratio >= TARGET_RATIO }],
        notes: [
          `${ROUNDS} alternating rounds of ${READS_PER_ROUND} reads of each kind; rates are medians over the rounds, the ratio the median of each round's own ratio; MB/s is 10^6 bytes a second; the COPY figure counts the file's bytes, not the COPY framing (a few bytes a chunk)`,
          `every round (MB/s): ${Object.entries(rates).map(([name, values]) => `${name} ${values.map(round1).join(', ')}`).join('; ')}`,
        ],
        baseline: {},
      });
    } finally {
      await client.end();
      await deployment.stop();
    }
  });
}
