// The test web inside a namespace of the NAT test network: like
// testbed/web/serve.ts, but it runs until SIGTERM (processes started inside a
// namespace get no stdin, and serve.ts ends when its stdin closes).
//
//   web.ts '{"sites": [...], "seed": 1}'      prints {"origins": {name: origin}} when listening
import { TestWeb, type SiteSpec } from '../web/testweb.js';

const arg = process.argv[2];
if (!arg) {
  process.stderr.write('usage: web.ts \'{"sites": [...], "seed": 1}\'\n');
  process.exit(2);
}
const cfg = JSON.parse(arg) as { sites: SiteSpec[]; seed?: number };
const web = await TestWeb.start(cfg.sites, { seed: cfg.seed ?? 1 });
process.stdout.write(`${JSON.stringify({ origins: Object.fromEntries(web.siteNames.map((n) => [n, web.site(n).origin])) })}\n`);
process.on('SIGTERM', () => void web.close().then(() => process.exit(0)));
