import type { DestinationStream } from 'pino';
import { PinoPretty } from 'pino-pretty';

/**
 * Where the service's log lines go: JSON lines on stdout, what log collectors read, or, when a person
 * watches a terminal (`npm run dev`, `npm start`), the same lines made readable by pino-pretty.
 * Written synchronously, as pino writes to stdout, so that nothing is lost when the process exits.
 */
export function logDestination(terminal = process.stdout.isTTY === true): DestinationStream | undefined {
  if (!terminal) return undefined;
  return PinoPretty({ colorize: true, sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}
