// Builds the app, takes the OpenAPI document it serves and checks it three ways: an independent
// OpenAPI 3.1 validator (@seriousme/openapi-schema-validator), then `redocly lint` (redocly.yaml) and
// spectral (.spectral.yaml), which must find no error; and that the SDK's checked-in inputs (the document's
// snapshot, the proof types written from the statement schema) are current. Exits non-zero on any failure.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { sdkProofTypesStaleness } from './sdk-proof-types.js';
import { sdkSnapshotStaleness } from './sdk-snapshot.js';
import { servedOpenApiDocument } from './served-openapi.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const document = await servedOpenApiDocument();
const result = await new Validator().validate(document);
if (!result.valid) {
  console.error(JSON.stringify(result.errors, null, 2));
  process.exitCode = 1;
} else {
  console.log(`OpenAPI ${document.openapi} document is valid: ${Object.keys(document.paths).length} paths, ${Object.keys(document.webhooks ?? {}).length} webhooks`);
}
checkSdkSnapshot(document);
await checkSdkProofTypes();

const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-openapi-'));
const documentFile = path.join(dataDir, 'openapi.json');
writeFileSync(documentFile, JSON.stringify(document, null, 2));
try {
  // Both linters run offline: no telemetry, no update check (the machine reaches no such host).
  // Any finding fails, warnings too: the rules accepted are turned off, with a reason, in the configs.
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
  const redocly = run('redocly', ['lint', documentFile, '--config', path.join(root, 'redocly.yaml'), '--format', 'json'], env);
  const report = JSON.parse(redocly.stdout) as { problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[] };
  for (const problem of report.problems) console.error(`  ${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer ?? ''}: ${problem.message}`);
  conclude('redocly lint (recommended)', redocly.status === 0 && report.problems.length === 0, report.problems.length);
  const spectral = run('spectral', ['lint', documentFile, '--ruleset', path.join(root, '.spectral.yaml'), '--fail-severity', 'hint', '--format', 'text', '--quiet'], env);
  const findings = spectral.stdout.split('\n').filter((line) => line.trim() !== '');
  for (const finding of findings) console.error(`  ${finding.replace(documentFile, 'openapi.json')}`);
  conclude('spectral lint (spectral:oas)', spectral.status === 0 && findings.length === 0, findings.length);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}

function run(tool: string, args: string[], env: NodeJS.ProcessEnv) {
  const result = spawnSync(path.join(root, 'node_modules', '.bin', tool), args, { cwd: root, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  // Redocly prints a banner about Node.js versions on stderr; only a failure's own words matter.
  if (result.status !== 0 && result.stdout.trim() === '') console.error(result.stderr);
  return result;
}

function conclude(check: string, passed: boolean, findings: number): void {
  console.log(`${check}: ${passed ? 'no finding' : `${findings} finding(s)`}`);
  if (!passed) process.exitCode = 1;
}

/** The SDK is generated from a checked-in copy of the document: it must be the served one. */
function checkSdkSnapshot(document: unknown): void {
  const staleness = sdkSnapshotStaleness(document);
  if (staleness === undefined) return;
  console.error(`${staleness}: run \`npm run openapi:write\` and commit it`);
  process.exitCode = 1;
}

/** The SDK's proof types are written from the statement schema: they must be what it gives today. */
async function checkSdkProofTypes(): Promise<void> {
  const staleness = await sdkProofTypesStaleness();
  if (staleness === undefined) return;
  console.error(`${staleness}: run \`npx tsx scripts/write-sdk-proof-types.ts\` and commit it`);
  process.exitCode = 1;
}
