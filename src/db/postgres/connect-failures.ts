import type pg from 'pg';
import { connectFailure } from '../errors.js';

/**
 * Every error raised while the pool hands out a connection (waiting for a free one, opening one,
 * its startup and authentication) leaves as a DatabaseUnavailableError, answered 503 `unavailable`
 * with Retry-After. Read by where it happened rather than by its code: a database that refuses
 * connections says so in codes of many classes (55000, 57P03, 28000, 3D000, 53300…), none of which
 * a request could have caused, and a code not met before must not become a 500. Errors of a
 * connection already handed out are the statement's, read by unavailableCause as before.
 */
export function withConnectFailuresUnavailable(pool: pg.Pool): pg.Pool {
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  (pool as { connect: () => Promise<pg.PoolClient> }).connect = async () => {
    try {
      return await connect();
    } catch (error) {
      throw connectFailure(error);
    }
  };
  return pool;
}
