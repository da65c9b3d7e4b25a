import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';

/** The OpenAPI document the app serves, read from an app built on a throwaway SQLite database. */
export async function servedOpenApiDocument(): Promise<{ openapi: string; paths: object; webhooks?: object }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'wo-openapi-'));
  const context = await createContext(loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }) });
  const app = await buildApp(context);
  try {
    const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    if (response.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${response.statusCode}`);
    return response.json();
  } finally {
    await app.close();
    await context.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
