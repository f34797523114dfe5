// `dht-manager channels add|list|import`: work on the channel database directly.
// They need the database to themselves: while `dht-manager serve` holds it, they
// say so and point to the HTTP API (exit 1).
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { Manager } from './manager.js';
import { defaultManagerDir } from './serve.js';
import { intArg } from '../cli.js';
import { StoreLockedError } from './errors.js';

function collect(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

function groupArg(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 63) throw new InvalidArgumentError('must be a group number (0 = highest priority)');
  return n;
}

async function withManager<T>(dataDir: string, httpHint: string, fn: (m: Manager) => Promise<T>): Promise<T> {
  let m: Manager;
  try {
    m = await Manager.open({ dataDir });
  } catch (err) {
    if (err instanceof StoreLockedError) {
      process.stderr.write(`dht-manager channels: ${err.message}\n  while the server runs, use its HTTP API, e.g.\n    ${httpHint}\n`);
      process.exit(1);
    }
    throw err;
  }
  try {
    return await fn(m);
  } finally {
    await m.close();
  }
}

interface AddFlags {
  dataDir: string;
  prefix?: string[];
  seed?: string[];
  filter?: string[];
  depth?: number;
  maxPages?: number;
  group?: number;
  json: boolean;
}

export function registerChannels(program: Command): void {
  const ch = program.command('channels').description('add, list or import channels in the database (the server must not be running; use its HTTP API then)');
  ch.command('add')
    .description('add a channel: a whole host (http://host/), a directory (http://host/dir/), or --prefix several')
    .argument('<url>', 'the channel URL (http or https)')
    .option('--data-dir <dir>', 'manager data directory', defaultManagerDir())
    .option('--prefix <path>', 'path prefix (repeatable: a set of sub-directories)', collect)
    .option('--seed <url>', 'seed URL (repeatable; default the channel URL)', collect)
    .option('--filter <regex>', 'URL filter (repeatable; checked for catastrophic backtracking)', collect)
    .option('--depth <n>', 'maximum crawl depth', intArg('--depth', 0, 1000))
    .option('--max-pages <n>', 'page cap per recrawl', intArg('--max-pages', 1, 1_000_000))
    .option('--group <g>', 'initial priority group (0 = most frequently changing)', groupArg)
    .option('--json', 'print the channel as JSON', false)
    .action(async (url: string, f: AddFlags) => {
      const input: Record<string, unknown> = { url };
      if (f.prefix !== undefined) {
        input.url = undefined;
        input.origin = (() => {
          try {
            return new URL(url).origin;
          } catch {
            return url;
          }
        })();
        input.pathPrefixes = f.prefix;
        input.seeds = f.seed ?? [url];
      } else if (f.seed !== undefined) input.seeds = f.seed;
      if (f.filter !== undefined) input.filters = f.filter;
      if (f.depth !== undefined) input.depth = f.depth;
      if (f.maxPages !== undefined) input.maxPages = f.maxPages;
      if (f.group !== undefined) input.group = f.group;
      if (input.url === undefined) delete input.url;
      await withManager(f.dataDir, `curl -X POST -H 'content-type: application/json' -d '${JSON.stringify(input)}' http://127.0.0.1:8787/api/channels`, async (m) => {
        try {
          const c = await m.channels.add(input);
          process.stdout.write(f.json ? JSON.stringify(c) + '\n' : `added ${c.id}: ${c.kind} ${c.origin} ${c.pathPrefixes.join(',')} (group ${c.group}, depth ${c.depth})\n`);
        } catch (err) {
          process.stderr.write(`dht-manager channels add: ${(err as Error).message}\n`);
          process.exitCode = 2;
        }
      });
    });
  ch.command('list')
    .description('list channels')
    .option('--data-dir <dir>', 'manager data directory', defaultManagerDir())
    .option('--limit <n>', 'at most this many', intArg('--limit', 1, 10_000_000), 1000)
    .option('--json', 'one JSON object per line', false)
    .action(async (f: { dataDir: string; limit: number; json: boolean }) => {
      await withManager(f.dataDir, 'curl http://127.0.0.1:8787/api/channels', async (m) => {
        let after: string | undefined;
        let n = 0;
        for (;;) {
          const page = await m.channels.list({ limit: Math.min(1000, f.limit - n), ...(after !== undefined ? { after } : {}) });
          for (const c of page) {
            process.stdout.write(f.json ? JSON.stringify(c) + '\n' : `${c.id}\t${c.kind}\t${c.origin}\t${c.pathPrefixes.join(',')}\tgroup ${c.group}\tchange ${c.changeInterval.toFixed(1)} min\n`);
          }
          n += page.length;
          if (page.length === 0 || n >= f.limit) break;
          after = page[page.length - 1]!.id;
        }
        if (!f.json) process.stderr.write(`${n} channel(s)\n`);
      });
    });
  ch.command('import')
    .description("import a seed list: one URL per line, '#' comments; each URL becomes a channel")
    .argument('<file>', 'the seed list')
    .option('--data-dir <dir>', 'manager data directory', defaultManagerDir())
    .option('--depth <n>', 'maximum crawl depth for the new channels', intArg('--depth', 0, 1000))
    .option('--group <g>', 'initial priority group', groupArg)
    .action(async (file: string, f: { dataDir: string; depth?: number; group?: number }) => {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (err) {
        process.stderr.write(`dht-manager channels import: cannot read ${file}: ${(err as Error).message}\n`);
        process.exit(2);
      }
      const extra: Record<string, unknown> = {};
      if (f.depth !== undefined) extra.depth = f.depth;
      if (f.group !== undefined) extra.group = f.group;
      await withManager(f.dataDir, `curl -X POST --data-binary @${file} -H 'content-type: text/uri-list' http://127.0.0.1:8787/api/channels/import`, async (m) => {
        const r = await m.channels.importSeedList(text, extra);
        for (const s of r.skipped) process.stderr.write(`skipped ${s.line !== undefined ? `line ${s.line}` : s.url}: ${s.reason}\n`);
        process.stdout.write(`imported ${r.added.length} channel(s), skipped ${r.skipped.length}\n`);
      });
    });
}
