// Loaded into the service by the soak part only: `node --expose-gc --import bench/lib/gc-probe.mjs …`.
// On SIGUSR2 it runs a full garbage collection and appends one JSON line of memory figures to the
// file named by BENCH_GC_REPORT. RSS read right after a full collection compares the process with
// itself at the same point of V8's collection cycle; RSS read at an arbitrary moment also holds
// whatever garbage the old generation has gathered since its last major collection (tens of MB).
import { appendFileSync } from 'node:fs';

const report = process.env.BENCH_GC_REPORT;
if (report && typeof globalThis.gc === 'function') {
  process.on('SIGUSR2', () => {
    globalThis.gc();
    const m = process.memoryUsage();
    appendFileSync(report, `${JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external })}\n`);
  });
}
