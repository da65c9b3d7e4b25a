import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.js';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** Everything piped into standard input (passwords, bundles). */
  readStdin(): Promise<string>;
}

export interface CliCommand {
  /** Words that select it: `keys create` → ['keys', 'create']. */
  readonly path: string[];
  readonly usage: string;
  readonly summary: string;
  /** More than the usage line, for `wo <command> --help` (what the options accept). */
  readonly details?: () => string;
  /** Resolves to the process exit code. */
  run(args: string[], config: Config, io: CliIo): Promise<number>;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

/** node:util parseArgs with errors turned into UsageError (printed with the command's usage). */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, allowPositionals = true) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
