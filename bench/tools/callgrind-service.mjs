// What the instruction-count tools (create-instructions.mjs, webhook-instructions.mjs) share: the
// service of a checkout's dist/ built in this process, and switching callgrind's counting on and off.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The checkout's service context on `dataDir`, built as `wo serve` builds it (keys created), silent. */
export async function openCheckoutContext(root, dataDir, env = {}) {
  const { pino } = await import(path.join(root, 'node_modules/pino/pino.js'));
  const { loadConfig } = await import(path.join(root, 'dist/config.js'));
  const { createContext } = await import(path.join(root, 'dist/context.js'));
  const config = loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
  return createContext(config, { logger: pino({ level: 'silent' }), createKeys: true });
}

/**
 * The checkout's app on a fresh data directory (`wo-cg-<name>-…`; DATABASE_URL from the environment when
 * set), ready, with an organization, a key that writes and reads work orders, and a category.
 */
export async function openRecordsApp(root, name) {
  const { buildApp } = await import(path.join(root, 'dist/app.js'));
  const dataDir = mkdtempSync(path.join(tmpdir(), `wo-cg-${name}-`));
  const context = await openCheckoutContext(root, dataDir, { WO_RATE_LIMIT_PER_MINUTE: '0', ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}) });
  const app = await buildApp(context);
  await app.ready();
  const org = await context.organizations.create('cg');
  const { key } = await context.apiKeys.create({ orgId: org.id, name: 'cg', scopes: ['records:write', 'records:read', 'categories:write'], createdBy: 'cg' });
  const category = await context.categories.create(org.id, { name: 'HVAC' });
  return { app, context, key, category, dataDir };
}

/** Counts instructions from here on (or stops), when run under `valgrind --tool=callgrind --instr-atstart=no`. */
export function countInstructions(on) {
  try {
    execFileSync('callgrind_control', ['-i', on ? 'on' : 'off', String(process.pid)], { stdio: 'ignore' });
  } catch {
    /* not under callgrind: runs uncounted */
  }
}
