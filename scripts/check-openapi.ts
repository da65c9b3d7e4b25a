// Builds the app, takes the OpenAPI document it serves and validates it with an independent
// OpenAPI 3.1 validator (@seriousme/openapi-schema-validator). Exits non-zero on any error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { sdkSnapshotStaleness } from './sdk-snapshot.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-openapi-'));
const config = loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
const context = await createContext(config, { logger: pino({ level: 'silent' }) });
const app = await buildApp(context);
try {
  const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  if (response.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${response.statusCode}`);
  const document = response.json();
  const result = await new Validator().validate(document);
  if (!result.valid) {
    console.error(JSON.stringify(result.errors, null, 2));
    process.exitCode = 1;
  } else {
    console.log(`OpenAPI ${document.openapi} document is valid: ${Object.keys(document.paths).length} paths, ${Object.keys(document.webhooks ?? {}).length} webhooks`);
  }
  checkSdkSnapshot(document);
} finally {
  await app.close();
  await context.close();
  rmSync(dataDir, { recursive: true, force: true });
}

/** The SDK is generated from a checked-in copy of the document: it must be the served one. */
function checkSdkSnapshot(document: unknown): void {
  const staleness = sdkSnapshotStaleness(document);
  if (staleness === undefined) return;
  console.error(`${staleness}: run \`npm run openapi:write\` and commit it`);
  process.exitCode = 1;
}
