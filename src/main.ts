import { loadConfig, ConfigError } from './config.js';
import { AppError } from './errors.js';
import { startFailure } from './db/errors.js';
import { COMMANDS } from './cli/commands.js';
import { UsageError, type CliCommand, type CliIo } from './cli/command.js';
import { tuneHeapFor } from './heap-tuning.js';

const io: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  async readStdin() {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
};

function usage(): string {
  return ['usage: wo <command> [options]', '', ...COMMANDS.map((c) => `  ${c.usage.padEnd(78)} ${c.summary}`)].join('\n');
}

/** Picks the command whose words match the longest prefix of argv. */
function findCommand(argv: string[]): { command: CliCommand; rest: string[] } | undefined {
  const sorted = [...COMMANDS].sort((a, b) => b.path.length - a.path.length);
  for (const command of sorted) {
    if (command.path.every((word, i) => argv[i] === word)) return { command, rest: argv.slice(command.path.length) };
  }
  return undefined;
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0]!)) {
    io.out(usage());
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv);
  if (!found) {
    io.err(`wo: unknown command "${argv.join(' ')}"\n\n${usage()}`);
    return 2;
  }
  // Options end at `--`: after it `--help` is a value (`wo orgs create -- --help` names an organization so).
  const options = found.rest.includes('--') ? found.rest.slice(0, found.rest.indexOf('--')) : found.rest;
  if (options.some((arg) => arg === '--help' || arg === '-h')) {
    const { command } = found;
    io.out([`usage: wo ${command.usage}`, '', command.summary, ...(command.details ? ['', command.details()] : [])].join('\n'));
    return 0;
  }
  try {
    const config = loadConfig();
    tuneHeapFor(config);
    return await found.command.run(found.rest, config, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`wo ${found.command.path.join(' ')}: ${error.message}\nusage: wo ${found.command.usage}`);
      return 2;
    }
    if (error instanceof ConfigError) {
      io.err(`wo: configuration error: ${error.message}`);
      return 2;
    }
    // The database failing the command (unreachable, refusing our role, not migrated): said plainly,
    // no stack. Before other AppErrors: a connection that could not be had is one (a 503 in the API).
    const failure = startFailure(error);
    if (failure) {
      io.err(`wo: ${failure.message}`);
      return failure.configuration ? 2 : 1;
    }
    if (error instanceof AppError) {
      const details = error.extra.errors?.map((e) => `\n  ${e.field}: ${e.message}`).join('') ?? '';
      io.err(`wo ${found.command.path.join(' ')}: ${error.detail}${details}`);
      return 1;
    }
    io.err(`wo: ${(error as Error)?.stack ?? String(error)}`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`wo: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
