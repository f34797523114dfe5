// Runs the test web in its own process (benchmarks, demos): the site specs
// come as JSON in argv[2]; prints one JSON line {"origins": {name: origin}}
// when listening. Commands on stdin: "advance <ms>", "stats", "quit".
import { createInterface } from 'node:readline';
import { TestWeb, type SiteSpec } from './testweb.js';

const arg = process.argv[2];
if (!arg) {
  console.error('usage: serve.ts \'{"sites": [...], "seed": 1}\'');
  process.exit(2);
}
const cfg = JSON.parse(arg) as { sites: SiteSpec[]; seed?: number };
const web = await TestWeb.start(cfg.sites, { seed: cfg.seed ?? 1 });
const origins: Record<string, string> = {};
for (const n of web.siteNames) origins[n] = web.site(n).origin;
process.stdout.write(JSON.stringify({ origins }) + '\n');

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const [cmd, arg1] = line.trim().split(/\s+/);
  if (cmd === 'advance') {
    web.clock.advance(Number(arg1));
    process.stdout.write(JSON.stringify({ now: web.clock.now() }) + '\n');
  } else if (cmd === 'stats') {
    const stats: Record<string, unknown> = {};
    for (const n of web.siteNames) {
      const s = web.site(n).stats;
      stats[n] = { requests: s.requests, notModified: s.notModified, maxConnections: s.maxConnections };
    }
    process.stdout.write(JSON.stringify({ stats }) + '\n');
  } else if (cmd === 'quit') {
    void web.close().then(() => process.exit(0));
  }
});
rl.on('close', () => void web.close().then(() => process.exit(0)));
