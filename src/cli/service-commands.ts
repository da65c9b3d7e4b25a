import { databaseOptions, openDatabase } from '../db/database.js';
import { compareWithApplied, migrateToLatest } from '../db/migrate.js';
import { parseOptions, type CliCommand } from './command.js';
import { runService } from './run-service.js';

export const serveCommand: CliCommand = {
  path: ['serve'],
  usage: 'serve [--no-worker]',
  summary: 'Run the API (and, unless --no-worker, the delivery worker and proof sequencer).',
  async run(args, config) {
    const { values } = parseOptions(args, { 'no-worker': { type: 'boolean' } }, false);
    await runService(config, { api: true, worker: !values['no-worker'] });
    return 0;
  },
};

export const workerCommand: CliCommand = {
  path: ['worker'],
  usage: 'worker',
  summary: 'Run only the background jobs: webhook deliveries, proof sequencer, housekeeping (health and metrics on WO_WORKER_PORT).',
  async run(args, config) {
    parseOptions(args, {}, false);
    await runService(config, { api: false, worker: true });
    return 0;
  },
};

export const migrateCommand: CliCommand = {
  path: ['migrate'],
  usage: 'migrate',
  summary: 'Bring the database schema up to date (also done automatically at start).',
  async run(args, config, io) {
    parseOptions(args, {}, false);
    const database = openDatabase(databaseOptions(config));
    try {
      const applied = await migrateToLatest(database);
      const { newer } = await compareWithApplied(database.db, database);
      if (applied.length > 0) io.out(`applied: ${applied.join(', ')}`);
      else if (newer.length > 0) io.out(`schema already up to date, and newer than this release (it also holds ${newer.join(', ')}): nothing to apply`);
      else io.out('schema already up to date');
    } finally {
      await database.close();
    }
    return 0;
  },
};
