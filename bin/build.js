#!/usr/bin/env node
// `npm run build` (also run by `npm install`/`npm ci` in the repository and
// before `npm pack`, through the `prepare` script): compiles src/, sim/,
// testbed/ and bench/ (bench:manager measures the compiled manager, as
// `dht-manager serve` runs it) with tsc into dist/, keeping the repository's layout, and copies
// what tsc does not emit: every other file under those folders (the
// dashboard's static files) and the latency dataset under data/. dist/ is
// rebuilt from scratch, so a moved or deleted source leaves nothing behind.
//
// The volunteer's executable is then bundled with esbuild into
// dist/bin/volunteer-crawler.js (plus chunks loaded on demand: the crawler on
// the first task, the standalone crawl): a volunteer starts by loading ~800
// small modules otherwise, which took half of its start-up. The manager and
// the simulator run the tsc output as it is (they read files relative to
// their modules: the dashboard, the WARC worker, the dataset).
// `--if-stale` builds only when a source is newer than the stamp file the
// build writes last (tests, benchmarks and the demo run it first, so they never
// run an old build of edited sources).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
/** Folders compiled into dist/ (tsconfig.build.json's include) whose other files are copied too. */
const SOURCES = ['src', 'sim', 'testbed', 'bench'];
/** Runtime data copied as it is. */
const DATA = ['data'];
/** Documentation the running program points at (the volunteer's systemd unit names docs/volunteer.md), copied to the same path under dist/. */
const SHIPPED_DOCS = ['docs/volunteer.md'];
const STAMP = join(dist, '.build-stamp');
/** Files outside SOURCES and DATA whose change changes the build. */
const CONFIG = ['tsconfig.json', 'tsconfig.build.json', 'bin/build.js', ...SHIPPED_DOCS];

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (e.isFile()) yield p;
  }
}

function newestInput() {
  let newest = 0;
  const see = (p) => {
    newest = Math.max(newest, statSync(p).mtimeMs);
  };
  for (const dir of [...SOURCES, ...DATA]) {
    try {
      for (const f of files(join(root, dir))) see(f);
    } catch {
      /* absent folder */
    }
  }
  for (const f of CONFIG) see(join(root, f));
  return newest;
}

function fresh() {
  try {
    return statSync(STAMP).mtimeMs >= newestInput();
  } catch {
    return false;
  }
}

if (process.argv.includes('--if-stale') && fresh()) process.exit(0);
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) {
  console.error('build: tsc failed');
  process.exit(r.status ?? 1);
}
let copied = 0;
for (const dir of SOURCES) {
  let all;
  try {
    all = [...files(join(root, dir))];
  } catch {
    continue; // a folder that does not exist (yet)
  }
  for (const f of all) {
    if (f.endsWith('.ts')) continue;
    const to = join(dist, relative(root, f));
    mkdirSync(dirname(to), { recursive: true });
    cpSync(f, to);
    copied++;
  }
}
for (const dir of DATA) cpSync(join(root, dir), join(dist, dir), { recursive: true });
for (const f of SHIPPED_DOCS) cpSync(join(root, f), join(dist, f));
const esbuild = await import('esbuild');
// The WARC writer starts its worker from a file next to its own module
// (new URL('./worker.js', import.meta.url)): the worker is bundled as an entry
// of its own into the directory the writer's chunk lands in, and the build
// fails if they ever part.
const WARC_WRITER = 'dist/src/crawler/warc/writer.js';
const WARC_WORKER = 'chunks/worker';
// libp2p's peer store and peer records sort protocol names, map keys and
// multiaddr strings with String.prototype.localeCompare — only for a canonical
// order (stored records compared with each other, arrays compared as sets).
// Its first call makes V8 build an ICU collator, whose data stays resident:
// ≈ 3 MB of every idle volunteer, for an order any total order serves. In the
// volunteer's bundle those calls compare UTF-16 code units instead. A call the
// pattern does not match is left as it is, with a warning; the idle-node test
// (test/node/idle-join.test.ts) then fails on the collator it builds.
const ORDER_ONLY_COMPARES = /[\\/]@libp2p[\\/](peer-store|peer-record)[\\/]dist[\\/]src[\\/].*\.js$/;
const codeUnitOrder = {
  name: 'code-unit-order',
  setup(build) {
    build.onLoad({ filter: ORDER_ONLY_COMPARES }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('.localeCompare(')) return undefined;
      const patched = text.replace(/([\w$.]+(?:\(\))?)\.localeCompare\(([\w$.]+(?:\(\))?)\)/g, '__volcrawlCodeUnitOrder($1, $2)');
      if (patched.includes('.localeCompare(')) {
        console.warn(`build: ${relative(root, args.path)}: a localeCompare call not rewritten (it builds an ICU collator in every volunteer)`);
        return undefined;
      }
      return { contents: `const __volcrawlCodeUnitOrder = (a, b) => (a < b ? -1 : a > b ? 1 : 0);\n${patched}`, loader: 'js' };
    });
  },
};
const bundle = await esbuild.build({
  plugins: [codeUnitOrder],
  entryPoints: { 'volunteer-crawler': join(dist, 'src/node/cli.js'), [WARC_WORKER]: join(dist, 'src/crawler/warc/worker.js') },
  outdir: join(dist, 'bin'),
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  metafile: true,
  // UPnP's SSDP client reads its own package.json at run time
  // (require('../../package.json')), which no bundle can resolve: it stays in node_modules.
  external: ['@achingbrain/ssdp'],
  // Bundled CommonJS modules call require(): give them one.
  banner: { js: "import { createRequire as __volcrawlRequire } from 'node:module'; const require = __volcrawlRequire(import.meta.url);" },
  logLevel: 'warning',
  // V8 keeps every loaded module's source text in memory, two bytes a
  // character once a file holds one non-ASCII character (a comment's dash or
  // arrow, a licence's name): the idle join's three largest chunks were
  // 6.6 MB of source strings. Without whitespace and comments, and with the
  // licence comments in *.LEGAL.txt files beside the chunks, the sources are
  // ASCII and a third of that (an idle join 74–75 MB RSS against 79–80, alone
  // on loopback). Names are kept (no identifier minification), so stack
  // traces still name functions; their positions map back through the
  // linked source maps, which Node reads only when asked
  // (NODE_OPTIONS=--enable-source-maps).
  minifyWhitespace: true,
  legalComments: 'external',
  sourcemap: 'linked',
});
const writerOut = Object.entries(bundle.metafile.outputs).find(([, o]) => WARC_WRITER in o.inputs)?.[0];
if (writerOut === undefined || dirname(resolve(root, writerOut)) !== dirname(join(dist, 'bin', `${WARC_WORKER}.js`))) {
  console.error(`build: the WARC writer (${writerOut ?? 'not bundled'}) and its worker (dist/bin/${WARC_WORKER}.js) are not in one directory`);
  process.exit(1);
}
// Which sources each output file holds (test/node/idle-join.test.ts checks with it that an idle
// `join` loads none of the crawler's); outside dist/bin, so not shipped.
writeFileSync(join(dist, 'volunteer-bundle.meta.json'), JSON.stringify(bundle.metafile));
writeFileSync(STAMP, `${new Date().toISOString()}\n`);
if (process.env.npm_lifecycle_event !== 'prepare') console.error(`build: dist/ compiled, ${copied} asset file(s) and ${DATA.join(', ')}/ copied`);
