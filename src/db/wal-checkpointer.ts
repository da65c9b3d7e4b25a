/**
 * Runs in a worker thread: copies committed WAL pages back into the SQLite database file.
 *
 * Why a thread: SQLite normally checkpoints inside whichever COMMIT pushes the WAL past 1,000 pages,
 * on the committing connection — here, the event loop. A checkpoint writes up to ~4 MB and fsyncs the
 * database file; measured on this machine that stalled every request for ~5 ms on a quiet disk and
 * for up to ~870 ms while another process was writing heavily (an ext4 fsync waits for the journal).
 * On its own connection in this thread the same work blocks nobody: PASSIVE never waits for the
 * writer, and the writer never waits for it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';

export interface CheckpointerData {
  file: string;
  intervalMs: number;
}

const { file, intervalMs } = workerData as CheckpointerData;
const db = new SqliteDatabase(file);
// Never wait for a lock: a busy checkpoint is simply retried at the next interval.
db.pragma('busy_timeout = 0');

const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // SQLITE_BUSY (another checkpointer, a writer mid-recovery): next time.
  }
}, intervalMs);

parentPort!.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
