// What the instruction-count tools (create-instructions.mjs, webhook-instructions.mjs) share: the
// service of a checkout's dist/ built in this process, and switching callgrind's counting on and off.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** The checkout's service context on `dataDir`, built as `wo serve` builds it (keys created), silent. */
export async function openCheckoutContext(root, dataDir, env = {}) {
  const { pino } = await import(path.join(root, 'node_modules/pino/pino.js'));
  const { loadConfig } = await import(path.join(root, 'dist/config.js'));
  const { createContext } = await import(path.join(root, 'dist/context.js'));
  const config = loadConfig({ WO_DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
  return createContext(config, { logger: pino({ level: 'silent' }), createKeys: true });
}

/** Counts instructions from here on (or stops), when run under `valgrind --tool=callgrind --instr-atstart=no`. */
export function countInstructions(on) {
  try {
    execFileSync('callgrind_control', ['-i', on ? 'on' : 'off', String(process.pid)], { stdio: 'ignore' });
  } catch {
    /* not under callgrind: runs uncounted */
  }
}
