// `npm run bench` arguments: parts, --database and --api-processes (bench/lib/bench-options.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseBenchArgs } from '../../bench/lib/bench-options.js';

const ORDER = ['create', 'list', 'lifecycle', 'webhooks', 'proofs', 'soak'];
const ON_POSTGRES = ['create', 'list', 'lifecycle', 'webhooks', 'proofs'];
const parse = (...argv: string[]) => parseBenchArgs(argv, ORDER, ON_POSTGRES);

describe('bench arguments', () => {
  it('runs every part on SQLite with one process when given nothing, as before', () => {
    assert.deepEqual(parse(), { report: false, database: 'sqlite', parts: ORDER, apiProcesses: [1] });
  });

  it('keeps the documented order of the parts named, whatever order they were given in', () => {
    assert.deepEqual(parse('soak', 'create'), { report: false, database: 'sqlite', parts: ['create', 'soak'], apiProcesses: [1] });
  });

  it('measures 1 and then 2 API processes on PostgreSQL unless --api-processes picks one count', () => {
    assert.deepEqual(parse('create', '--database', 'postgres'), { report: false, database: 'postgres', parts: ['create'], apiProcesses: [1, 2] });
    assert.deepEqual(parse('--database=postgres', 'list', '--api-processes', '2'), { report: false, database: 'postgres', parts: ['list'], apiProcesses: [2] });
  });

  it('runs the five PostgreSQL parts, without the soak, when --database postgres names none', () => {
    const options = parse('--database', 'postgres');
    assert.ok(!('error' in options));
    assert.deepEqual(options.parts, ON_POSTGRES);
  });

  it('rejects what it cannot run, saying why', () => {
    assert.match((parse('creat') as { error: string }).error, /unknown part creat; choose from create, list/);
    assert.match((parse('soak', '--database', 'postgres') as { error: string }).error, /soak runs on SQLite only/);
    assert.match((parse('--database', 'mysql') as { error: string }).error, /must be sqlite or postgres/);
    assert.match((parse('--database') as { error: string }).error, /--database needs a value/);
    assert.match((parse('--api-processes', '2') as { error: string }).error, /needs --database postgres/);
    assert.match((parse('--database', 'postgres', '--api-processes', '0') as { error: string }).error, /whole number from 1 to 8/);
    assert.match((parse('--fast') as { error: string }).error, /unknown option --fast/);
  });

  it('only rebuilds the report with --report', () => {
    assert.equal((parse('--report') as { report: boolean }).report, true);
  });
});
