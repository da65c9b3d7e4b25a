import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Files only the service's user may read: key files and the embedded database. Directories are
 * created 0700, files 0600, and a file appears under its name only once it is complete, so another
 * process reading it at the same moment never sees it half written.
 */

export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Writes `content` to a temporary file beside `file` (same file system, so it can be renamed or linked), synced. */
function writeTemporary(file: string, content: string): string {
  // Not ending in the real name's extension: directory listings of `*.json` never pick it up.
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = fs.openSync(temporary, 'wx', 0o600);
  try {
    fs.writeSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return temporary;
}

/** Makes a rename or link in `dir` durable. */
function syncDirectory(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the file itself is synced already.
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Creates `file` with `content` unless it exists: resolves to false (leaving the existing file as it
 * is) when another process was first. The complete file is hard-linked into place, which fails
 * when the name is taken, so exactly one of several writers wins and nobody sees a partial file.
 */
export function createPrivateFile(file: string, content: string): boolean {
  ensurePrivateDir(path.dirname(file));
  const temporary = writeTemporary(file, content);
  try {
    fs.linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
  syncDirectory(path.dirname(file));
  return true;
}

/** Replaces `file` with `content` at once: readers see the old file or the new one, never a mix. */
export function replacePrivateFile(file: string, content: string): void {
  const temporary = writeTemporary(file, content);
  try {
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
  syncDirectory(path.dirname(file));
}

/**
 * Creates an empty `file` owner-only if it does not exist. SQLite gives the `-wal` and `-shm` files
 * it creates later the mode of the database file, so creating that one 0600 covers all three.
 */
export function touchPrivateFile(file: string): void {
  ensurePrivateDir(path.dirname(file));
  fs.closeSync(fs.openSync(file, 'a', 0o600));
}
