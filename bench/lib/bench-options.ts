export interface BenchOptions {
  /** `--report`: rebuild docs/benchmarks.md from the saved results, measure nothing. */
  report: boolean;
  database: 'sqlite' | 'postgres';
  /** The parts to run, in the documented order. */
  parts: string[];
  /** PostgreSQL: the API-process counts to measure, each in turn (`--api-processes N`; default 1 and 2). */
  apiProcesses: number[];
}

const MAX_API_PROCESSES = 8;

/**
 * `[<part>…] [--database sqlite|postgres] [--api-processes N]`, or `--report`, given every part in
 * order and those that run on PostgreSQL. Answers the options, or a message saying what is wrong
 * (the caller exits 2 with it).
 */
export function parseBenchArgs(argv: readonly string[], partOrder: string[], postgresParts: readonly string[]): BenchOptions | { error: string } {
  if (argv[0] === '--report') return { report: true, database: 'sqlite', parts: [], apiProcesses: [] };
  const named: string[] = [];
  let database: string | undefined;
  let apiProcesses: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    if (flag !== '--database' && flag !== '--api-processes') {
      if (flag.startsWith('-')) return { error: `unknown option ${flag}; options: --database sqlite|postgres, --api-processes N, --report` };
      named.push(flag);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) return { error: `${flag} needs a value` };
    if (flag === '--database') database = value;
    else apiProcesses = value;
  }

  if (database !== undefined && database !== 'sqlite' && database !== 'postgres') return { error: `--database must be sqlite or postgres, got "${database}"` };
  const onPostgres = database === 'postgres';
  const available = onPostgres ? partOrder.filter((p) => postgresParts.includes(p)) : partOrder;
  const unknown = named.filter((name) => !partOrder.includes(name));
  if (unknown.length) return { error: `unknown part ${unknown.join(', ')}; choose from ${partOrder.join(', ')}` };
  const unavailable = named.filter((name) => !available.includes(name));
  if (unavailable.length) return { error: `${unavailable.join(', ')} runs on SQLite only; on PostgreSQL choose from ${available.join(', ')}` };

  let counts = onPostgres ? [1, 2] : [1];
  if (apiProcesses !== undefined) {
    if (!onPostgres) return { error: '--api-processes needs --database postgres (on SQLite one process serves the API and runs the worker)' };
    const n = Number(apiProcesses);
    if (!Number.isInteger(n) || n < 1 || n > MAX_API_PROCESSES) return { error: `--api-processes must be a whole number from 1 to ${MAX_API_PROCESSES}, got "${apiProcesses}"` };
    counts = [n];
  }
  return {
    report: false,
    database: onPostgres ? 'postgres' : 'sqlite',
    parts: named.length ? available.filter((p) => named.includes(p)) : available,
    apiProcesses: counts,
  };
}
