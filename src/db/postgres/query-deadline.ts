import type pg from 'pg';
import { QUERY_DEADLINE_MESSAGE } from '../errors.js';

/** How long past the session's statement_timeout a query may go unanswered before its connection is given up. */
export const QUERY_DEADLINE_GRACE_MS = 2_000;

/**
 * `statement_timeout` is enforced by the server. A server that stops answering altogether (frozen, or
 * behind a middlebox that keeps the TCP connection up) never sends that error, and TCP does not help
 * either: a frozen server's kernel still acknowledges what is sent, and keepalive probes are not sent
 * while sent data waits for its acknowledgement. A request that had a connection then waited forever.
 *
 * So every query also has a deadline on this side: the session's statement_timeout plus a grace.
 * Past it, the connection is destroyed: the query fails as a lost connection (answered 503
 * `unavailable`), and the pool discards the client (it is no longer queryable) instead of handing
 * the stuck session to the next request. The deadline follows the session's own setting: a session
 * that runs `SET statement_timeout = 0` (migrations, which may build an index for minutes) has none
 * until it runs `RESET statement_timeout`. No deadline when `statementTimeoutMs` is 0. A streamed
 * query must end within the deadline too: a COPY of one attachment chunk is 512 KiB.
 */
export function withQueryDeadline(pool: pg.Pool, statementTimeoutMs: number): pg.Pool {
  if (statementTimeoutMs <= 0) return pool;
  const deadlines = new WeakMap<pg.PoolClient, number>();
  // The last pipelined query sent on each client, settled or not (never rejecting): a pipelined query
  // (a commit group's, src/db/postgres/commit-groups.ts) waits on the server behind the ones sent before it,
  // so its deadline runs from when the one before it is answered, as the server's statement_timeout does.
  const lastSent = new WeakMap<pg.PoolClient, Promise<void>>();
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  (pool as { connect: () => Promise<pg.PoolClient> }).connect = async () => {
    const client = await connect();
    if (deadlines.has(client)) return client;
    deadlines.set(client, statementTimeoutMs + QUERY_DEADLINE_GRACE_MS);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
      if (typeof text === 'string') {
        const setting = sessionTimeoutSetting(text);
        if (setting !== undefined) deadlines.set(client, setting === 0 ? 0 : (setting ?? statementTimeoutMs) + QUERY_DEADLINE_GRACE_MS);
      }
      const result = query(...args);
      const deadline = deadlines.get(client)!;
      if (deadline === 0) return result;
      // A streamed query (a Submittable: the binary COPY that downloads read, src/db/postgres/binary-copy.ts)
      // has the same deadline, until it ends one way or another; a callback query, which nothing here
      // sends, has none.
      if (!(result instanceof Promise)) {
        if (isStream(result)) {
          const timer = setTimeout(() => giveUp(client, deadline), deadline);
          const settle = () => clearTimeout(timer);
          for (const event of ['end', 'error', 'close', 'finish']) result.once(event, settle);
        }
        return result;
      }
      // Outside pipeline mode a client runs one query at a time: its deadline runs from now.
      if (!(client as unknown as { pipeline?: boolean }).pipeline) {
        const timer = setTimeout(() => giveUp(client, deadline), deadline);
        return result.finally(() => clearTimeout(timer));
      }
      let timer: NodeJS.Timeout | undefined;
      let answered = false;
      const arm = () => {
        if (!answered) timer = setTimeout(() => giveUp(client, deadline), deadline);
      };
      const before = lastSent.get(client);
      if (before) void before.then(arm);
      else arm();
      const settled = result.then(
        () => {},
        () => {},
      );
      lastSent.set(client, settled);
      void settled.then(() => {
        if (lastSent.get(client) === settled) lastSent.delete(client);
      });
      return result.finally(() => {
        answered = true;
        clearTimeout(timer);
      });
    };
    return client;
  };
  return pool;
}

function isStream(value: unknown): value is { once(event: string, listener: () => void): unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { once?: unknown }).once === 'function';
}

/** Ends a connection whose query went unanswered: its query fails, and the pool drops the client. */
function giveUp(client: pg.PoolClient, deadline: number): void {
  const { connection } = client as unknown as { connection?: { stream?: { destroy(error?: Error): void } } };
  connection?.stream?.destroy(new Error(`${QUERY_DEADLINE_MESSAGE} ${deadline} ms`));
}

/**
 * The statement_timeout a statement sets for its session: milliseconds, null for RESET (back to the
 * pool's), undefined when it is not such a statement. Only the forms this service sends.
 */
function sessionTimeoutSetting(text: string): number | null | undefined {
  if (/^\s*reset\s+statement_timeout\s*;?\s*$/i.test(text)) return null;
  const set = /^\s*set\s+(?:session\s+)?statement_timeout\s*(?:=|to)\s*'?(\d+)(ms)?'?\s*;?\s*$/i.exec(text);
  return set ? Number(set[1]) : undefined;
}
