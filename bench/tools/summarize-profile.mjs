// Self time of a .cpuprofile by function and by file (package), highest first:
//   node bench/tools/summarize-profile.mjs <file.cpuprofile> [rows]
import fs from 'node:fs';

const [file, rowsArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/tools/summarize-profile.mjs <file.cpuprofile> [rows]');
  process.exit(2);
}
const rows = Number(rowsArg ?? 40);
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const selfTime = new Map();
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  selfTime.set(id, (selfTime.get(id) ?? 0) + dt);
  total += dt;
});
const shorten = (url) => (url.includes('node_modules/') ? url.slice(url.lastIndexOf('node_modules/') + 13) : url.replace(/.*\/(dist|src)\//, '$1/'));
const packageOrFile = (url) => (url.includes('node_modules/') ? shorten(url).replace(/^((@[^/]+\/)?[^/]+)\/.*$/, '$1') : shorten(url));
const byFunction = new Map();
const byFile = new Map();
for (const [id, time] of selfTime) {
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  const fn = `${functionName || '(anonymous)'} ${shorten(url)}${url ? `:${lineNumber + 1}` : ''}`;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + time);
  const where = url ? packageOrFile(url) : functionName;
  byFile.set(where, (byFile.get(where) ?? 0) + time);
}
const top = (map) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, rows)
    .map(([name, time]) => `${((100 * time) / total).toFixed(1).padStart(5)} %  ${name}`)
    .join('\n');
console.log(`${(total / 1e6).toFixed(2)} s sampled\n\nself time by function\n${top(byFunction)}\n\nself time by file or package\n${top(byFile)}`);
