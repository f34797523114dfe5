// Loaded into every volunteer by `bench:node --detail` (NODE_OPTIONS=--import=…):
// every 2 s it writes what only the process itself can say about its memory —
// process.memoryUsage() and V8's heap spaces (committed and used, MB) — to
// $VOLCRAWL_BENCH_PROBE/<pid>.json, which the bench reads beside /proc/<pid>/smaps.
// Not part of a volunteer: a diagnostic for the benchmark only.
import { writeFileSync } from 'node:fs';
import process from 'node:process';
import { setInterval } from 'node:timers';
import { getHeapSpaceStatistics } from 'node:v8';

const dir = process.env.VOLCRAWL_BENCH_PROBE;
if (dir !== undefined && dir !== '') {
  const mb = (b) => Math.round((b / 2 ** 20) * 10) / 10;
  const sample = () => {
    const m = process.memoryUsage();
    const spaces = {};
    for (const s of getHeapSpaceStatistics()) spaces[s.space_name.replace(/_space$/, '')] = [mb(s.physical_space_size), mb(s.space_used_size)];
    const rec = { rss: mb(m.rss), heapTotal: mb(m.heapTotal), heapUsed: mb(m.heapUsed), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers), spaces };
    try {
      writeFileSync(`${dir}/${process.pid}.json`, JSON.stringify(rec));
    } catch {
      // the bench removed its directory: it is stopping us
    }
  };
  setInterval(sample, 2000).unref();
}
