import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Inside the repository, so that `@work-order-api/client` resolves to the built SDK as for a user.
const workDir = path.join(root, '.tmp', `sdk-types-${process.pid}`);
after(() => rmSync(workDir, { recursive: true, force: true }));

/** Compiles `source` as a user's strict ESM program against the built SDK; answers tsc's error lines. */
function compile(name: string, source: string): string[] {
  mkdirSync(workDir, { recursive: true });
  writeFileSync(path.join(workDir, `${name}.ts`), source);
  const tsconfig = {
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, lib: ['ES2023', 'DOM'], types: [] },
    files: [`${name}.ts`],
  };
  writeFileSync(path.join(workDir, `tsconfig.${name}.json`), JSON.stringify(tsconfig));
  try {
    execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(workDir, `tsconfig.${name}.json`)], { cwd: workDir, encoding: 'utf8' });
    return [];
  } catch (error) {
    return String((error as { stdout: string }).stdout).split('\n').filter((line) => line.includes('error TS'));
  }
}

const preamble = `import { createClient, isProblem, ProblemError } from '@work-order-api/client';
const client = createClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'wo_x' });
`;

describe('the SDK types carry the document through', () => {
  it('compiles a correct program without errors', () => {
    const errors = compile(
      'right',
      `${preamble}
const record = await client.createRecord({ body: { categoryId: 'cat_1', address: '12 Harbour Road', requesterName: 'Ann', description: 'Leak' } });
const status: 'OPEN' | 'ASSIGNED' | 'IN_PROGRESS' | 'ON_HOLD' | 'COMPLETED' | 'CLOSED' | 'CANCELLED' = record.status;
for await (const item of client.listRecords.all({ query: { status: 'OPEN' } })) console.log(item.id, status);
try {
  await client.getRecord({ path: { id: record.id } });
} catch (error) {
  if (error instanceof ProblemError && error.code === 'invalid_transition') console.log(error.problem.allowedActions);
  if (isProblem(error, 'not_found', 'precondition_failed')) console.log(error.code);
}
`,
    );
    assert.deepEqual(errors, []);
  });

  it('refuses a misspelt operation, body field and error code, each at its line', () => {
    const errors = compile(
      'wrong',
      `${preamble}
await client.getRecrod({ path: { id: 'rec_1' } });
await client.createRecord({ body: { categoryId: 'cat_1', adress: '12 Harbour Road', requesterName: 'Ann', description: 'Leak' } });
try {
  await client.getRecord({ path: { id: 'rec_1' } });
} catch (error) {
  if (error instanceof ProblemError && error.code === 'invalid_transtion') console.log(error);
  if (isProblem(error, 'not_fonud')) console.log(error);
}
await client.listRecords({ query: { stauts: 'OPEN' } });
`,
    );
    const at = (line: number) => errors.filter((error) => error.startsWith(`wrong.ts(${line},`)).join('\n');
    assert.match(at(4), /TS2551: Property 'getRecrod' does not exist .* Did you mean 'getRecord'\?/);
    assert.match(at(5), /TS2561: Object literal may only specify known properties, but 'adress' does not exist .* Did you mean to write 'address'\?/);
    assert.match(at(9), /TS2367: This comparison appears to be unintentional because the types .* and '"invalid_transtion"' have no overlap/);
    assert.match(at(10), /TS2345: Argument of type '"not_fonud"' is not assignable to parameter of type/);
    assert.match(at(12), /TS2561: Object literal may only specify known properties, but 'stauts' does not exist .* Did you mean to write 'status'\?/);
    assert.equal(errors.length, 5, errors.join('\n'));
  });

  it('types the history in the proof statement’s entry shape, and marks the first shape’s method deprecated', () => {
    const source = `${preamble}
import type { HistoryEntry, CompletionStatement } from '@work-order-api/client';
const page = await client.listRecordHistory({ path: { id: 'rec_1' }, query: { limit: 10 } });
const entry: HistoryEntry = page.history[0]!;
const signed: CompletionStatement['history'][number] = entry;
const actor: string | null = signed.actor;
const moved: [string | null, string | null, string] = [entry.from, entry.to, entry.at];
for await (const item of client.listRecordHistory.all({ path: { id: 'rec_1' } })) console.log(item.action, actor, moved);
const old = await client.listRecordEvents({ path: { id: 'rec_1' } });
console.log(old.events[0]?.fromStatus, old.events[0]?.actor?.type);
`;
    assert.deepEqual(compile('history', source), []);
    // The editor strikes the deprecated method through: its declaration carries @deprecated.
    const program = ts.createProgram([path.join(workDir, 'history.ts')], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, types: [] });
    const checker = program.getTypeChecker();
    const clientType = checker.getTypeAtLocation(findIdentifier(program.getSourceFile(path.join(workDir, 'history.ts'))!, 'client'));
    const tagsOf = (name: string) => clientType.getProperty(name)!.getJsDocTags(checker).map((tag) => tag.name);
    assert.ok(tagsOf('listRecordEvents').includes('deprecated'));
    assert.ok(!tagsOf('listRecordHistory').includes('deprecated'));
  });
});

/** The first identifier `name` in `file`. */
function findIdentifier(file: ts.SourceFile, name: string): ts.Node {
  let found: ts.Node | undefined;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (ts.isIdentifier(node) && node.text === name) found = node;
    else ts.forEachChild(node, visit);
  };
  visit(file);
  assert.ok(found, `${name} in ${file.fileName}`);
  return found;
}
