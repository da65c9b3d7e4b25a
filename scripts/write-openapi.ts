// Writes the OpenAPI document the app serves to sdk/openapi.json, the snapshot the SDK is generated
// from. `npm run openapi:check` fails while the snapshot differs from what the app serves.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { SDK_SNAPSHOT_PATH, serializeSnapshot } from './sdk-snapshot.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-openapi-'));
const config = loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
const context = await createContext(config, { logger: pino({ level: 'silent' }) });
const app = await buildApp(context);
try {
  const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  if (response.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${response.statusCode}`);
  writeFileSync(SDK_SNAPSHOT_PATH, serializeSnapshot(response.json()));
  console.log(`wrote ${path.relative(process.cwd(), SDK_SNAPSHOT_PATH)}`);
} finally {
  await app.close();
  await context.close();
  rmSync(dataDir, { recursive: true, force: true });
}
