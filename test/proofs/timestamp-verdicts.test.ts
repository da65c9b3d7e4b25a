import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { verdictOf, verdictWords, verifyBundle, type Jwks, type ProofBundle } from '../../src/proofs/verify.js';
import { verifyProof } from '@work-order-api/client';
import { spawnWo } from '../helpers/child-processes.js';
import { recordBody, seedCategory, startTestApp, waitFor, type TestApp } from '../helpers/test-app.js';
import { startTestTsa, type TestTsa } from '../helpers/timestamp-authority.js';

const CHROMIUM = '/usr/bin/chromium';

interface TimestampVector {
  name: string;
  bundle: unknown;
  /** Which roots the verifier is given: the TSA's, another CA's, or none. */
  roots: 'tsa' | 'other' | 'none';
  /** The first line `wo proof verify` prints, the page's headline: detail. */
  expected: RegExp;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The same vectors, made from a sealed proof with a token of the local TSA, through the three verifiers. */
describe('verdicts on timestamped proofs: the verifier, the SDK, `wo proof verify --tsa-roots` and the /verify page agree', () => {
  let tsa: TestTsa;
  let t: TestApp;
  let dir: string;
  let jwks: Jwks;
  let vectors: TimestampVector[];
  const rootsText = { tsa: '', other: '' };

  before(async () => {
    tsa = await startTestTsa();
    dir = mkdtempSync(path.join(tmpdir(), 'wo-timestamp-verdicts-'));
    rootsText.tsa = readFileSync(tsa.rootsFile, 'utf8');
    rootsText.other = readFileSync(tsa.otherRootsFile, 'utf8');
    t = await startTestApp('sqlite', { env: { WO_TSA_URL: tsa.url, WO_TSA_ROOTS: tsa.rootsFile } });
    const tenant = await t.newTenant();
    const categoryId = await seedCategory(tenant);
    const id = (await tenant.request({ method: 'POST', url: '/api/v1/records', payload: recordBody(categoryId, { assignee: 'Bob' }) })).json().id as string;
    await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/start`, payload: {} });
    await tenant.request({ method: 'POST', url: `/api/v1/records/${id}/complete`, payload: { resolutionNotes: 'Fixed' } });
    await t.context.proofs.log.sealPending();
    const bundle = await waitFor(async () => {
      await t.context.timestamping!.step();
      const fetched = (await tenant.request({ method: 'GET', url: `/api/v1/records/${id}/proof` })).json() as ProofBundle;
      return fetched.timestampToken ? fetched : undefined;
    }, 20_000, 'a timestamped bundle');
    jwks = t.context.proofs.jwks() as Jwks;
    const body = bundle.checkpoint.slice(0, bundle.checkpoint.lastIndexOf('\n\n') + 1);
    const token = Buffer.from(bundle.timestampToken!, 'base64');
    const altered = Buffer.from(token);
    altered[altered.length - 1] = altered[altered.length - 1]! ^ 0x01;
    tsa.mode = 'no-eku';
    const byNonTsa = Buffer.from(await tsa.stamp(body)).toString('base64');
    tsa.mode = 'good';
    const ofAnotherBody = Buffer.from(await tsa.stamp(`${body}x\n`)).toString('base64');
    const summary = `proof ${bundle.proofId} of work order ${bundle.recordId}, leaf ${bundle.leafIndex} of ${bundle.treeSize} in ${bundle.keys.logKeyName}`;
    const { timestampToken: _token, ...withoutToken } = bundle;
    vectors = [
      { name: 'a token by the trusted TSA', bundle, roots: 'tsa', expected: new RegExp(`^valid: ${escape(summary)}; timestamped no later than \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z by Test TSA \\(RFC 3161\\)$`) },
      { name: 'the same token, no roots given', bundle, roots: 'none', expected: new RegExp(`^valid: ${escape(summary)}; an RFC 3161 timestamp of \\S+ by Test TSA, whose root was not checked \\(no TSA roots given\\): it bounds nothing yet$`) },
      { name: 'a TSA of another CA than the trusted one', bundle, roots: 'other', expected: /^invalid: timestamp_untrusted_root: The timestamp token’s signer does not chain to a trusted TSA root\. Its signer's certificate does not chain/ },
      { name: 'a token over another body', bundle: { ...bundle, timestampToken: ofAnotherBody }, roots: 'tsa', expected: /^invalid: timestamp_imprint_mismatch: .*it timestamps something else\.$/ },
      { name: 'a token signed by a certificate without the timeStamping EKU', bundle: { ...bundle, timestampToken: byNonTsa }, roots: 'tsa', expected: /^invalid: timestamp_not_tsa: .*Test Signer Without EKU may not sign timestamps: it has no extended key usage\.$/ },
      { name: 'a token altered', bundle: { ...bundle, timestampToken: altered.toString('base64') }, roots: 'tsa', expected: /^invalid: timestamp_signature_invalid: / },
      { name: 'a token that is not base64', bundle: { ...bundle, timestampToken: 'not base64!' }, roots: 'none', expected: /^invalid: timestamp_malformed: .*It is not base64\.$/ },
      { name: 'roots given, no token', bundle: withoutToken, roots: 'tsa', expected: /^invalid: timestamp_missing: TSA roots were given/ },
    ];
    writeFileSync(path.join(dir, 'jwks.json'), JSON.stringify(jwks));
    writeFileSync(path.join(dir, 'tsa.pem'), rootsText.tsa);
    writeFileSync(path.join(dir, 'other.pem'), rootsText.other);
  });
  after(async () => {
    await t?.close();
    await tsa?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  const rootsOption = (roots: TimestampVector['roots']) => (roots === 'none' ? {} : { tsaRoots: rootsText[roots] });

  it('verifyBundle and the SDK’s verifyProof give each vector its verdict', async () => {
    for (const vector of vectors) {
      const { headline, detail } = verdictWords(verdictOf(await verifyBundle(vector.bundle, jwks, rootsOption(vector.roots)), []));
      assert.match(`${headline}: ${detail}`, vector.expected, vector.name);
      const sdk = await verifyProof(vector.bundle, jwks, rootsOption(vector.roots));
      assert.match(`${sdk.valid ? 'valid' : `invalid: ${sdk.reason}`}: ${sdk.detail}`, vector.expected, `${vector.name} (SDK)`);
    }
    const malformed = await verifyBundle(vectors[0]!.bundle, jwks, { tsaRoots: 'no certificate here' });
    assert.equal(!malformed.valid && malformed.reason, 'tsa_roots_malformed');
  });

  it('`wo proof verify --tsa-roots` prints the same first line, exit 0 only for the valid ones, and --json the timestamp', async () => {
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    for (const [i, vector] of vectors.entries()) {
      const file = path.join(dir, `bundle-${i}.json`);
      writeFileSync(file, JSON.stringify(vector.bundle));
      const roots = vector.roots === 'none' ? [] : ['--tsa-roots', path.join(dir, `${vector.roots}.pem`)];
      const run = spawnWo(['proof', 'verify', file, '--keys', path.join(dir, 'jwks.json'), ...roots], env);
      const code = await run.exited;
      const first = run.stdout.split('\n')[0]!;
      assert.match(first, vector.expected, `${vector.name}: ${run.stdout}${run.stderr}`);
      assert.equal(code, first.startsWith('valid') ? 0 : 1, vector.name);
    }
    const json = spawnWo(['proof', 'verify', path.join(dir, 'bundle-0.json'), '--keys', path.join(dir, 'jwks.json'), '--tsa-roots', path.join(dir, 'tsa.pem'), '--json'], env);
    assert.equal(await json.exited, 0, json.stderr);
    assert.deepEqual((JSON.parse(json.stdout) as { timestamp: { tsa: string; rootChecked: boolean } }).timestamp.rootChecked, true);
  });

  describe('in headless Chromium', () => {
    let browser: Browser;
    let baseUrl: string;
    before(async () => {
      baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking'] });
    });
    after(async () => {
      await browser?.close();
    });

    it('the /verify page, its TSA roots filled in with the service’s, gives each vector the same headline and detail, and makes no request', async () => {
      const page = await browser.newPage();
      const requests: string[] = [];
      await page.goto(`${baseUrl}/verify`);
      await page.waitForFunction(() => document.getElementById('reasons')!.textContent !== '');
      assert.equal((await page.inputValue('#tsa-roots')).trim(), rootsText.tsa.trim());
      page.on('request', (request) => requests.push(request.url()));
      for (const vector of vectors) {
        await page.fill('#tsa-roots', vector.roots === 'none' ? '' : rootsText[vector.roots]);
        await page.fill('#bundle', JSON.stringify(vector.bundle));
        await page.click('#verify');
        await page.waitForSelector('#result[data-state="done"]');
        const words = `${await page.textContent('#result-headline')}: ${await page.textContent('#result-detail')}`;
        assert.match(words, vector.expected, vector.name);
        await page.evaluate(() => {
          document.getElementById('result')!.dataset.state = 'idle';
        });
      }
      assert.deepEqual(requests, []);
      await page.close();
    });
  });
});
