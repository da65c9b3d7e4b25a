import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The room map of docs/architecture.md, checked from the source text as an outsider would read it.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const src = path.join(root, 'src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}
const sourceFiles = filesUnder(src).filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'));
const relative = (file: string) => path.relative(src, file).split(path.sep).join('/');

/** The folders that hold a feature: those with a feature.ts. */
const featureFolders = readdirSync(src).filter((entry) => existsSync(path.join(src, entry, 'feature.ts')));

/** What a file imports, as paths relative to src/ (only the project's own modules). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)'/gms)].map((match) => match[1]!);
  return specifiers.map((specifier) => relative(path.resolve(path.dirname(file), specifier)).replace(/\.js$/, '.ts'));
}

/** A file named for its database: it may speak that database's dialect. */
const namedForDatabase = (file: string) => /(^|[/-])(postgres|sqlite|pg)([/-]|\.ts$)/.test(relative(file));

describe('the structure of src/', () => {
  it('has feature folders that each declare one feature', () => {
    assert.ok(featureFolders.length >= 10, `feature folders: ${featureFolders.join(', ')}`);
    const list = readFileSync(path.join(src, 'features.ts'), 'utf8');
    for (const folder of featureFolders) assert.match(list, new RegExp(`from '\\./${folder}/feature\\.js'`), `src/features.ts lists ${folder}`);
  });

  it('keeps http/ and events/ free of imports of any feature', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles.filter((f) => /^(http|events)\//.test(relative(f)))) {
      const own = relative(file).split('/')[0];
      for (const target of importsOf(file)) {
        const folder = target.split('/')[0]!;
        if (folder !== own && featureFolders.includes(folder)) offenders.push(`${relative(file)} → ${target}`);
      }
    }
    assert.deepEqual(offenders, []);
  });

  it('lets no service or repository import src/http/', () => {
    const offenders = sourceFiles
      .filter((file) => /(service|repository)[^/]*\.ts$/.test(relative(file)))
      .flatMap((file) => importsOf(file).filter((target) => target.startsWith('http/')).map((target) => `${relative(file)} → ${target}`));
    assert.deepEqual(offenders, []);
  });

  it('checks the database dialect only in src/db/, in files named for their database, and in the composition root', () => {
    const dialectCheck = /isSqlite\(|isPostgres\(|\.dialect\s*[!=]==|dialect\s*[!=]==|\[[\w.]*dialect\]/i;
    const offenders = sourceFiles
      .filter((file) => !relative(file).startsWith('db/') && !namedForDatabase(file) && relative(file) !== 'context.ts')
      .filter((file) => dialectCheck.test(readFileSync(file, 'utf8')))
      .map(relative);
    assert.deepEqual(offenders, []);
  });

  it('chooses per database (byDialect) only in src/db/, in files named for their database, and in the composition roots', () => {
    const choice = /\bbyDialect\s*[<(]/;
    const compositionRoot = (file: string) => relative(file) === 'context.ts' || /^[^/]+\/feature\.ts$/.test(relative(file));
    const offenders = sourceFiles
      .filter((file) => !relative(file).startsWith('db/') && !namedForDatabase(file) && !compositionRoot(file))
      .filter((file) => choice.test(readFileSync(file, 'utf8')))
      .map(relative);
    assert.deepEqual(offenders, []);
  });

  it('keeps every source file under 400 lines, the admin pages aside', () => {
    const long = sourceFiles
      .filter((file) => relative(file) !== 'admin/pages.ts')
      .map((file) => ({ file: relative(file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > 400);
    assert.deepEqual(long, []);
  });

  it('puts every test under test/ in a folder of its feature, none loose', () => {
    const loose = readdirSync(path.join(root, 'test')).filter((entry) => entry.endsWith('.ts'));
    assert.deepEqual(loose, []);
  });
});
