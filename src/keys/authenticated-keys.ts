import type { Logger } from 'pino';
import type { Executor } from '../db/database.js';
import { notifyListeners, PostgresListener } from '../db/postgres/listener.js';
import type { ApiKeysTable } from './tables.js';

/** The NOTIFY channel on which a revocation tells every process to forget the keys it remembers. */
const REVOCATIONS_CHANNEL = 'wo_api_key_revoked';
/**
 * Longest use of a remembered key without reading it again: bounds how long a revocation made by a
 * process that does not notify (an older release, during a rolling upgrade) goes unnoticed.
 */
export const REMEMBERED_KEY_TTL_MS = 10_000;
/** Keys remembered at most; past it the oldest are forgotten (only keys that authenticated are kept). */
const MAX_REMEMBERED_KEYS = 10_000;

/**
 * How a process hears that a key may have been revoked by another process: until `upToDate` says so,
 * it remembers nothing. A watch calls `onRevoked` (forget every key) when it hears of one, or when it
 * may have missed one.
 */
export interface RevocationWatch {
  /** Whether every revocation made elsewhere until now has been acted on; false: remember nothing now. */
  upToDate(): boolean;
  close(): Promise<void>;
}

/** PostgreSQL: revocations are announced on a NOTIFY channel (announceRevocation) every API process LISTENs on. */
export function postgresRevocationWatch(options: { url: string; schema?: string; logger: Pick<Logger, 'warn' | 'error'> }): (onRevoked: () => void) => RevocationWatch {
  return (onRevoked) => {
    const listener = new PostgresListener({
      ...options,
      channel: REVOCATIONS_CHANNEL,
      applicationName: 'wo-api-keys',
      purpose: 'API key revocations',
      onMessage: onRevoked,
      onLost: onRevoked,
    });
    return {
      upToDate() {
        if (listener.listening) return true;
        void listener.connect();
        return false;
      },
      close: () => listener.close(),
    };
  };
}

/**
 * SQLite: another process (a `wo keys revoke`, a second `wo serve` on the file) writes through its own
 * connection, and SQLite's `PRAGMA data_version` changes whenever another connection commits to the
 * file. Any such commit forgets every key: revocations are rare, and the next request reads its key
 * again. This process's own revocations forget through ApiKeyService.revoke.
 */
export function sqliteRevocationWatch(dataVersion: () => number): (onRevoked: () => void) => RevocationWatch {
  return (onRevoked) => {
    let seen = dataVersion();
    return {
      upToDate() {
        const now = dataVersion();
        if (now !== seen) {
          seen = now;
          onRevoked();
        }
        return true;
      },
      close: async () => {},
    };
  };
}

/**
 * Keys this process authenticated recently, by hash, so that a request does not spend a statement (on
 * PostgreSQL a round trip) on its key: on a busy API process that read was one of every request's
 * two to three round trips, and on SQLite about a tenth of a single read's CPU.
 *
 * @NOTE: a revocation still takes effect at once, everywhere. On PostgreSQL `announceRevocation` runs
 * in the revoking transaction; every API process listens, and forgets every key it remembers when told.
 * While its LISTEN connection is down (it could miss a revocation) a process remembers nothing and
 * reads every key. On SQLite every request first asks the file whether another connection committed
 * since (sqliteRevocationWatch). Expiry is checked at each use, from the remembered row. Unknown keys
 * are never remembered, so guessing fills nothing.
 */
export class AuthenticatedKeys {
  private readonly byHash = new Map<string, { row: ApiKeysTable; until: number }>();
  private readonly watch: RevocationWatch;
  /**
   * Moves at every forgetAll: a row read before a revocation was heard must not be remembered after
   * it (read `generation` before reading the key, pass it to `remember`).
   */
  private generationNow = 0;

  constructor(watch: (onRevoked: () => void) => RevocationWatch) {
    this.watch = watch(() => this.forgetAll());
  }

  /** The remembered row of the key with this hash, if it is fresh and revocations can be heard. */
  recall(hash: string, now: number): ApiKeysTable | undefined {
    if (!this.watch.upToDate()) return undefined;
    const remembered = this.byHash.get(hash);
    if (!remembered) return undefined;
    if (remembered.until > now) return remembered.row;
    this.byHash.delete(hash);
    return undefined;
  }

  get generation(): number {
    return this.generationNow;
  }

  /** Remembers a key that just authenticated, read from the database when `generation` was current. */
  remember(hash: string, row: ApiKeysTable, now: number, generation: number): void {
    if (!this.watch.upToDate() || generation !== this.generationNow) return;
    if (this.byHash.size >= MAX_REMEMBERED_KEYS) this.byHash.delete(this.byHash.keys().next().value!);
    this.byHash.set(hash, { row, until: now + REMEMBERED_KEY_TTL_MS });
  }

  forgetAll(): void {
    this.generationNow++;
    this.byHash.clear();
  }

  close(): Promise<void> {
    this.forgetAll();
    return this.watch.close();
  }
}

/** Tells every process that remembers keys to forget them, when the revoking transaction commits. */
export async function announceRevocation(tx: Executor, keyId: string): Promise<void> {
  await notifyListeners(tx, REVOCATIONS_CHANNEL, keyId);
}
