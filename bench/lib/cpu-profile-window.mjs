// Bench-only preload (`node --import ./bench/lib/cpu-profile-window.mjs`): the first SIGUSR2 starts V8's
// CPU profiler, the next writes the profile to $BENCH_PROFILE_DIR (default: the OS temp dir) as
// window-<pid>.cpuprofile. Unlike `--cpu-prof`, the profile then covers only the load being measured,
// not start-up, seeding or shutdown. Open it in Chrome DevTools, or summarize it with
// `node bench/tools/summarize-profile.mjs <file>`.
import fs from 'node:fs';
import inspector from 'node:inspector';
import os from 'node:os';
import path from 'node:path';

const session = new inspector.Session();
session.connect();
let running = false;
process.on('SIGUSR2', () => {
  if (!running) {
    running = true;
    session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 200 }, () => session.post('Profiler.start')));
    return;
  }
  running = false;
  session.post('Profiler.stop', (error, result) => {
    if (error) return;
    const dir = process.env.BENCH_PROFILE_DIR ?? os.tmpdir();
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `window-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
  });
});
