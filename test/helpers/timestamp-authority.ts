import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as asn1js from 'asn1js';
import { TimeStampReq } from 'pkijs';

const run = promisify(execFile);

/**
 * A local RFC 3161 TSA for tests: `openssl ts -reply` behind a loopback HTTP server, with its own CA
 * made in a temporary directory. `mode` makes it answer as a TSA that must be refused:
 * - `no-eku` / `eku-not-critical`: the token is signed by a certificate of the same CA without the
 *   id-kp-timeStamping extended key usage, or with it not critical (openssl ts refuses to sign with
 *   such a certificate, so its TSTInfo is signed again with `openssl cms`);
 * - `untrusted`: signed by a TSA certificate of another CA, not the trusted one;
 * - `wrong-imprint`: it timestamps another hash; `wrong-nonce`: it answers with another nonce;
 * - `refuse`: a TimeStampResp with PKIStatus rejection; `error`: HTTP 500.
 */
export type TsaMode = 'good' | 'no-eku' | 'eku-not-critical' | 'untrusted' | 'wrong-imprint' | 'wrong-nonce' | 'refuse' | 'error';

export interface TestTsa {
  /** The TSA's URL (POST application/timestamp-query). */
  url: string;
  /** A PEM file of the trusted root (the CA of the good TSA certificate). */
  rootsFile: string;
  /** A PEM file of the other CA's root. */
  otherRootsFile: string;
  mode: TsaMode;
  /** Requests answered so far. */
  requests: number;
  /** A token of the current mode for these bytes (a checkpoint body), as the TSA would answer. */
  stamp(body: string): Promise<Uint8Array>;
  stop(): Promise<void>;
  /** Listens again on the same port after stop(). */
  start(): Promise<void>;
  remove(): Promise<void>;
}

const EXTENSIONS = `[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[tsa]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = critical, timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[noeku]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[ekunotcritical]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
`;

/**
 * The `openssl ts -reply` configuration of one request, with a serial file of that request's own:
 * openssl reads the file, then truncates and rewrites it, so two replies sharing one file race and
 * the one that reads it empty answers "PKIStatus 2: Error during serial number generation" (the
 * timestamping job asks for several checkpoints in parallel).
 */
function tsaConfig(serialFile: string): string {
  return `[tsa]
default_tsa = tsa_config
[tsa_config]
serial = ${serialFile}
crypto_device = builtin
signer_digest = sha256
default_policy = 1.3.6.1.4.1.55555.1
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
`;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  await run('openssl', args, { cwd: dir });
}

async function makeCa(dir: string, name: string, subject: string): Promise<void> {
  await openssl(dir, ['req', '-x509', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-subj', subject, '-days', '3650', '-config', 'ext.cnf', '-extensions', 'ca']);
}

async function makeLeaf(dir: string, name: string, subject: string, ca: string, extensions: string): Promise<void> {
  await openssl(dir, ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject, '-config', 'ext.cnf']);
  await openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '3650', '-extfile', 'ext.cnf', '-extensions', extensions]);
}

/** DER of a TimeStampResp granting `token` (SEQUENCE { PKIStatusInfo { 0 }, token }). */
function grantedReply(token: Uint8Array): Uint8Array {
  const sequence = new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [new asn1js.Integer({ value: 0 })] }), asn1js.fromBER(token.slice().buffer).result] });
  return new Uint8Array(sequence.toBER(false));
}

function rejectedReply(): Uint8Array {
  const status = new asn1js.Sequence({ value: [new asn1js.Integer({ value: 2 }), new asn1js.Sequence({ value: [new asn1js.Utf8String({ value: 'test TSA refuses' })] })] });
  return new Uint8Array(new asn1js.Sequence({ value: [status] }).toBER(false));
}

export async function startTestTsa(): Promise<TestTsa> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wo-tsa-'));
  writeFileSync(path.join(dir, 'ext.cnf'), EXTENSIONS);
  await makeCa(dir, 'root', '/CN=Test Root CA');
  await makeCa(dir, 'other-root', '/CN=Other Root CA');
  await makeLeaf(dir, 'tsa', '/CN=Test TSA', 'root', 'tsa');
  await makeLeaf(dir, 'noeku', '/CN=Test Signer Without EKU', 'root', 'noeku');
  await makeLeaf(dir, 'ekunotcritical', '/CN=Test Signer With Non-critical EKU', 'root', 'ekunotcritical');
  await makeLeaf(dir, 'other-tsa', '/CN=Other TSA', 'other-root', 'tsa');

  let sequence = 0;
  /**
   * The files of one openssl ts -reply, numbered `n`: its query, and its configuration and serial
   * file, created before openssl runs. The serial is `n` itself, so each token of this TSA has its own.
   */
  function replyFiles(n: number, request: Uint8Array): string[] {
    writeFileSync(path.join(dir, `q${n}.tsq`), request);
    writeFileSync(path.join(dir, `serial${n}`), `${n.toString(16).padStart(2, '0')}\n`);
    writeFileSync(path.join(dir, `tsa${n}.cnf`), tsaConfig(path.join(dir, `serial${n}`)));
    return [`q${n}.tsq`, `serial${n}`, `tsa${n}.cnf`];
  }

  /** openssl ts -reply on a request (DER), signed by `signer`; the TimeStampResp's DER. */
  async function reply(request: Uint8Array, signer: string): Promise<Uint8Array> {
    const n = ++sequence;
    const files = replyFiles(n, request);
    await openssl(dir, ['ts', '-reply', '-config', `tsa${n}.cnf`, '-queryfile', `q${n}.tsq`, '-signer', `${signer}.crt`, '-inkey', `${signer}.key`, '-out', `r${n}.tsr`]);
    const answer = readFileSync(path.join(dir, `r${n}.tsr`));
    for (const file of [...files, `r${n}.tsr`]) rmSync(path.join(dir, file));
    return new Uint8Array(answer);
  }

  /** A token of the good TSA whose TSTInfo is signed again by `signer` with openssl cms. */
  async function resigned(request: Uint8Array, signer: string): Promise<Uint8Array> {
    const n = ++sequence;
    const files = replyFiles(n, request);
    await openssl(dir, ['ts', '-reply', '-config', `tsa${n}.cnf`, '-queryfile', `q${n}.tsq`, '-signer', 'tsa.crt', '-inkey', 'tsa.key', '-token_out', '-out', `t${n}.der`]);
    await openssl(dir, ['cms', '-verify', '-noverify', '-inform', 'DER', '-in', `t${n}.der`, '-out', `i${n}.der`]);
    await openssl(dir, ['cms', '-sign', '-binary', '-nodetach', '-nosmimecap', '-econtent_type', '1.2.840.113549.1.9.16.1.4', '-md', 'sha256', '-in', `i${n}.der`, '-signer', `${signer}.crt`, '-inkey', `${signer}.key`, '-outform', 'DER', '-out', `s${n}.der`]);
    const token = new Uint8Array(readFileSync(path.join(dir, `s${n}.der`)));
    for (const file of [...files, `t${n}.der`, `i${n}.der`, `s${n}.der`]) rmSync(path.join(dir, file));
    return grantedReply(token);
  }

  /** The request with its imprint or its nonce replaced. */
  function altered(request: Uint8Array, what: 'imprint' | 'nonce'): Uint8Array {
    const parsed = TimeStampReq.fromBER(request.slice().buffer);
    if (what === 'imprint') parsed.messageImprint.hashedMessage = new asn1js.OctetString({ valueHex: new Uint8Array(32).fill(7).buffer });
    else parsed.nonce = new asn1js.Integer({ value: 424242 });
    return new Uint8Array(parsed.toSchema().toBER(false));
  }

  async function answer(request: Uint8Array, mode: TsaMode): Promise<Uint8Array> {
    switch (mode) {
      case 'good':
        return reply(request, 'tsa');
      case 'untrusted':
        return reply(request, 'other-tsa');
      case 'no-eku':
        return resigned(request, 'noeku');
      case 'eku-not-critical':
        return resigned(request, 'ekunotcritical');
      case 'wrong-imprint':
        return reply(altered(request, 'imprint'), 'tsa');
      case 'wrong-nonce':
        return reply(altered(request, 'nonce'), 'tsa');
      case 'refuse':
        return rejectedReply();
      case 'error':
        throw new Error('error mode answers 500');
    }
  }

  let server: Server | undefined;
  let port = 0;
  const tsa: TestTsa = {
    url: '',
    rootsFile: path.join(dir, 'root.crt'),
    otherRootsFile: path.join(dir, 'other-root.crt'),
    mode: 'good',
    requests: 0,
    async stamp(body) {
      const { timestampRequest, tokenOfReply } = await import('../../src/proofs/timestamp-token.js');
      const reply = await answer(await timestampRequest(body, new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])), tsa.mode);
      const token = tokenOfReply(reply);
      if (typeof token === 'string') throw new Error(token);
      return token;
    },
    async start() {
      server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          tsa.requests++;
          answer(new Uint8Array(Buffer.concat(chunks)), tsa.mode).then(
            (der) => response.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(der),
            () => response.writeHead(500, { 'content-type': 'text/plain' }).end('the test TSA failed'),
          );
        });
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
      tsa.url = `http://127.0.0.1:${port}/tsa`;
    },
    async stop() {
      const closing = server;
      server = undefined;
      if (!closing) return;
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    async remove() {
      await tsa.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await tsa.start();
  return tsa;
}
