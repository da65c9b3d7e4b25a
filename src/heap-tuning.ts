import v8 from 'node:v8';
import type { Config } from './config.js';

/**
 * V8 "pretenures" an allocation site whose objects mostly survive a young-generation collection:
 * from then on it allocates them straight in the old generation, which only a full mark-compact
 * frees. On PostgreSQL a request's objects outlive a scavenge as a matter of course: a request waits
 * for a pooled connection and for the server's answer (tens of milliseconds at 50 connections), and
 * the young generation fills every ~20 ms. V8 then took the sites of per-request objects for
 * long-lived ones, and the API process spent 13.5 % of its time in GC (a mark-compact every ~400 ms)
 * against a plain pg handler's 3.3 %. With pretenuring off, those objects die young again: on the
 * event feed at 50 connections the API's CPU per request fell from 1,050-1,100 µs to 620-770, and a
 * create's from 620-745 to 550-610 (docs/benchmarks.md, "Session 41"). On SQLite a read or a write
 * finishes within a turn or two of the event loop, nothing is mistaken for long-lived, and the same
 * switch measured no gain (a create 539/498 µs with pretenuring, 623/553 without), so it stays on.
 */
export function pretenuringFor(config: Pick<Config, 'databaseUrl'>): boolean {
  return config.databaseUrl === undefined;
}

/** Sets V8's heap policy for this process's database (pretenuringFor); before the service starts serving. */
export function tuneHeapFor(config: Pick<Config, 'databaseUrl'>): void {
  if (!pretenuringFor(config)) v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
