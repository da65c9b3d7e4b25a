import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const read = (file: string) => readFileSync(file, 'utf8');
const DEPLOY_FILES = ['Dockerfile', 'deploy/compose.yaml', 'deploy/systemd/wo-api.service', 'deploy/systemd/wo-worker.service', 'deploy/systemd/wo-witness.service', 'deploy/systemd/wo.env.example'];

describe('the deployment examples (no container engine runs here, so what can be checked is checked here)', () => {
  it('the Dockerfile installs and builds with the commands of the README and package.json, and runs what `npm start` runs', () => {
    assert.match(read('README.md'), /npm ci && npm start/);
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    const [build, run] = start.split(' && exec ');
    assert.equal(build, 'tsc -p tsconfig.build.json --noCheck');
    assert.equal(run, 'node dist/main.js serve');
    const dockerfile = read('Dockerfile');
    assert.match(dockerfile, /^RUN npm ci /m);
    assert.ok(dockerfile.includes(`RUN npx ${build}\n`), 'the same build');
    assert.match(dockerfile, /^ENTRYPOINT \["node", "dist\/main\.js"\]\nCMD \["serve"\]$/m);
  });

  it('every variable the example files set is one the service reads', () => {
    const config = read('src/config.ts');
    for (const file of DEPLOY_FILES) {
      for (const [name] of read(file).matchAll(/\bWO_[A-Z0-9_]+\b/g)) {
        assert.ok(config.includes(`'${name}'`) || config.includes(`env.${name}`), `${file} sets ${name}, which src/config.ts does not read`);
      }
    }
  });

  it('the systemd units run the documented commands, and the README links the guide', () => {
    assert.match(read('deploy/systemd/wo-api.service'), /^ExecStart=\/usr\/bin\/node dist\/main\.js serve --no-worker$/m);
    assert.match(read('deploy/systemd/wo-worker.service'), /^ExecStart=\/usr\/bin\/node dist\/main\.js worker$/m);
    assert.match(read('deploy/systemd/wo-witness.service'), /^ExecStart=\/usr\/bin\/node dist\/main\.js witness$/m);
    assert.match(read('README.md'), /\(docs\/deployment\.md\)/);
  });
});
