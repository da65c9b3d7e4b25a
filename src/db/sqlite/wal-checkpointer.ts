import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';
import { backgroundLoop, type BackgroundJob } from '../../background-loop.js';

/**
 * WAL checkpoints in a worker thread: copies committed WAL pages back into the SQLite database file.
 *
 * Why a thread: SQLite normally checkpoints inside whichever COMMIT pushes the WAL past 1,000 pages,
 * on the committing connection — here, the event loop. A checkpoint writes up to ~4 MB and fsyncs the
 * database file, which stalls every request for as long as the fsync takes: milliseconds on a quiet
 * disk, most of a second while another process writes heavily (an ext4 fsync waits for the journal).
 * On its own connection in a thread the same work blocks nobody: PASSIVE never waits for the writer,
 * and the writer never waits for it. The main connection keeps SQLite's automatic checkpoint only as
 * a safety net, far above what the thread lets the WAL reach.
 */
export interface WalCheckpointer {
  /** Checkpoints the thread ran that copied pages (exported as a metric). */
  readonly checkpoints: { count: number };
  /** The loop that asks the thread for a checkpoint every CHECKPOINT_INTERVAL_MS: a job of the registry, started with the process's roles. */
  readonly loop: BackgroundJob;
  /** Stops the loop and closes the thread's connection. */
  stop(): Promise<void>;
}

export const CHECKPOINT_INTERVAL_MS = 200;

const FALLBACK_AUTOCHECKPOINT_PAGES = 20_000;
const SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES = 1_000;

// The thread's code is plain CommonJS given as source, so it runs the same under `node dist/…`,
// `tsx` and the test runner, none of which would agree on how to load a TypeScript file in a worker.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SqliteDatabase = require(workerData.betterSqlite3);
const db = new SqliteDatabase(workerData.file);
db.pragma('busy_timeout = 0'); // never wait for a lock: a busy checkpoint is retried next interval
let last = { log: 0, checkpointed: 0 };
parentPort.on('message', (message) => {
  if (message === 'checkpoint') {
    let copied = false;
    try {
      const [result] = db.pragma('wal_checkpoint(PASSIVE)');
      copied = Boolean(result && result.checkpointed > 0 && (result.log !== last.log || result.checkpointed !== last.checkpointed));
      if (result) last = result;
    } catch {
      // SQLITE_BUSY (another checkpointer, a writer mid-recovery): next time.
    }
    parentPort.postMessage({ copied });
  } else if (message === 'stop') {
    db.close();
    parentPort.close();
  }
});
`;

/** The thread answers every request, even a failed checkpoint, and its exit ends the wait for an answer. */
const STEP_CANNOT_FAIL = { error: () => {}, warn: () => {}, info: () => {} };

/** Starts the checkpoint thread for the database file `sqlite` has open in WAL mode; its loop is started by the job registry. */
export function startWalCheckpointer(sqlite: SqliteDatabase.Database, file: string): WalCheckpointer {
  sqlite.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  const betterSqlite3 = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { file: path.resolve(file), betterSqlite3 } });
  worker.unref();
  const checkpoints = { count: 0 };
  let answered: (() => void) | undefined;
  worker.on('message', (message: { copied: boolean }) => {
    if (message.copied) checkpoints.count++;
    answered?.();
  });
  // A thread that failed costs performance, not correctness: SQLite's own checkpoints take over.
  worker.on('error', () => {
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT_PAGES}`);
  });
  let threadExited = false;
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      threadExited = true;
      answered?.();
      resolve();
    }),
  );
  // The thread only runs checkpoints; when to run them is this loop's to decide, like every loop of the service.
  const loop = backgroundLoop({
    name: 'wal-checkpointer',
    firstWaitMs: CHECKPOINT_INTERVAL_MS,
    retryMs: CHECKPOINT_INTERVAL_MS,
    unref: true,
    step: async () => {
      if (!threadExited) {
        await new Promise<void>((resolve) => {
          answered = resolve;
          worker.postMessage('checkpoint');
        });
        answered = undefined;
      }
      return CHECKPOINT_INTERVAL_MS;
    },
    logger: STEP_CANNOT_FAIL,
    errorMessage: 'WAL checkpoint failed',
  });
  return {
    checkpoints,
    loop,
    async stop() {
      worker.ref(); // keep the process alive until the thread has answered and closed its connection
      await loop.stop();
      worker.postMessage('stop');
      await exited;
    },
  };
}
