import os from 'node:os';
import { pino } from 'pino';
import type { Config } from '../config.js';
import { parseVerifierKey } from '../proofs/checkpoint.js';
import { Witness } from '../witness/witness.js';
import { WitnessKey, WitnessKeyError } from '../witness/witness-key.js';
import { witnessServer } from '../witness/witness-server.js';
import { WitnessStore } from '../witness/witness-store.js';
import { parseOptions, UsageError, type CliCommand } from './command.js';

function openKey(config: Config): WitnessKey {
  try {
    return WitnessKey.loadOrCreate(config.witness.dataDir, config.witness.name, new Date(), `${os.hostname()}/witness`);
  } catch (error) {
    if (error instanceof WitnessKeyError) throw new UsageError(error.message);
    throw error;
  }
}

export const witnessServeCommand: CliCommand = {
  path: ['witness'],
  usage: 'witness',
  summary: 'Run a C2SP tlog-witness (POST /add-checkpoint on WO_WITNESS_PORT, state in WO_WITNESS_DATA_DIR) that cosigns only checkpoints consistent with what it cosigned before.',
  details: () =>
    [
      'A witness keeps its own Ed25519 key and state and never moves a log\'s state backwards: a split view',
      'is refused. Follow a log with `wo witness add-log --origin … --vkey …`; print this witness\'s vkey',
      '(for the service\'s WO_WITNESS_POLICY) with `wo witness vkey`. Stops on SIGTERM or SIGINT.',
    ].join('\n'),
  async run(args, config) {
    parseOptions(args, {}, false);
    const logger = pino({ level: config.logLevel, base: { service: 'wo-witness' } });
    const key = openKey(config);
    const store = new WitnessStore(config.witness.dataDir);
    const server = witnessServer(new Witness(store, key, () => new Date()), logger);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.witness.port, config.host, () => resolve());
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.witness.port;
    logger.info({ port, host: config.host, name: key.key.name, vkey: key.vkey, logs: store.logs().map((log) => log.origin) }, 'witness running');
    await new Promise<void>((resolve) => {
      const stop = () => server.close(() => resolve());
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
    store.close();
    return 0;
  },
};

export const witnessAddLogCommand: CliCommand = {
  path: ['witness', 'add-log'],
  usage: 'witness add-log --origin <origin> --vkey <vkey>',
  summary: 'Follow a log: its origin and its signed-note verifier key (GET /api/v1/transparency/verifier-key of the service). A running witness sees it at its next request.',
  async run(args, config, io) {
    const { values } = parseOptions(args, { origin: { type: 'string' }, vkey: { type: 'string' } }, false);
    if (!values.origin || !values.vkey) throw new UsageError('give both --origin and --vkey');
    const key = parseVerifierKey(values.vkey);
    if (!key) throw new UsageError('--vkey is not an Ed25519 signed-note verifier key (<name>+<hex key id>+<base64(0x01 ‖ key)>)');
    // @NOTE: the key name must be the origin: a log key signs checkpoints under its own name (tlog-checkpoint).
    if (key.name !== values.origin) throw new UsageError(`the vkey is named "${key.name}", not the origin "${values.origin}"`);
    const store = new WitnessStore(config.witness.dataDir);
    try {
      const outcome = store.addLog(values.origin, values.vkey.trim(), new Date().toISOString());
      io.out(`${outcome === 'added' ? 'following' : 'key replaced for'} ${values.origin}`);
    } finally {
      store.close();
    }
    return 0;
  },
};

export const witnessVkeyCommand: CliCommand = {
  path: ['witness', 'vkey'],
  usage: 'witness vkey',
  summary: 'Print this witness\'s verifier key (C2SP vkey, cosignature/v1), creating its key on first use: the line a policy names it with.',
  async run(args, config, io) {
    parseOptions(args, {}, false);
    io.out(openKey(config).vkey);
    return 0;
  },
};
