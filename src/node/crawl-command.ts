// `volunteer-crawler crawl <url>`: crawl one channel on this machine, without
// the network. Writes pages.jsonl (changed pages: text and metadata),
// validators.jsonl (feed it back with --known for a conditional recrawl),
// summary.json (status, statistics, outcomes, inter-site URLs, WARC files)
// and crawl-<start>-<serial>.warc.gz with a .cdxj index beside each (the
// exchanges as received: robots.txt, redirects, pages; revisits for unchanged
// pages on a recrawl; src/crawler/warc). Progress goes to stderr when it is a
// TTY.
import { once } from 'node:events';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import cliProgress from 'cli-progress';
import { bytesArg } from '../cli.js';
import { TokenBucket } from '../crawler/bandwidth.js';
import { USER_AGENT } from '../crawler/limits.js';
import { parseTask, TaskValidationError, type KnownPage, type TaskResult } from '../crawler/task.js';
import { runTask } from '../crawler/thread.js';
import { DEFAULT_WARC_MAX_BYTES } from '../crawler/warc/files.js';
import { WarcWriter, type WarcSummary } from '../crawler/warc/writer.js';

/** A commander parser for an integer flag in min..max (otherwise commander prints the reason and exits non-zero). */
export function int(name: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer in ${min}..${max}`);
    return n;
  };
}

function collect(v: string, prev: string[] = []): string[] {
  return [...prev, v];
}

function httpUrl(v: string): URL {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new InvalidArgumentError(`not a URL: ${v}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new InvalidArgumentError(`only http and https URLs can be crawled, got ${u.protocol}`);
  return u;
}

interface CrawlFlags {
  depth: number;
  filter?: string[];
  prefix?: string[];
  out: string;
  allowPrivate: boolean;
  maxPages: number;
  delay: number;
  timeout: number;
  maxBandwidth?: number;
  known?: string;
  warc: boolean;
  warcMaxSize: number;
  warcErrors: boolean;
  progress: boolean;
}

function defaultPrefix(u: URL): string {
  const p = u.pathname;
  return p.slice(0, p.lastIndexOf('/') + 1) || '/';
}

function readKnown(path: string): KnownPage[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(`cannot read --known ${path}: ${(err as Error).message}`);
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      try {
        return JSON.parse(l) as KnownPage;
      } catch {
        throw new InvalidArgumentError(`--known ${path}: line ${i + 1} is not JSON`);
      }
    });
}

export async function crawlCommand(url: URL, flags: CrawlFlags, cmd: Command): Promise<void> {
  const prefixes = flags.prefix && flags.prefix.length > 0 ? flags.prefix : [defaultPrefix(url)];
  const known = flags.known ? readKnown(flags.known) : [];
  let task;
  try {
    task = parseTask({
      id: `crawl-${Date.now()}`,
      scope: { origin: url.origin, pathPrefixes: prefixes },
      seeds: [url.href],
      filters: flags.filter ?? [],
      maxDepth: flags.depth,
      maxPages: flags.maxPages,
      expectedPages: Math.max(flags.maxPages, known.length),
      delayMs: flags.delay,
      deadline: Date.now() + flags.timeout * 1000,
      known,
      pageDigests: known.flatMap((k) => (k.digest !== undefined ? [k.digest] : [])),
    });
  } catch (err) {
    if (err instanceof TaskValidationError) cmd.error(`volunteer-crawler crawl: ${err.reason}`, { exitCode: 2, code: 'volcrawl.invalidTask' });
    throw err;
  }
  mkdirSync(flags.out, { recursive: true });
  const pagesOut = createWriteStream(join(flags.out, 'pages.jsonl'));
  const validatorsOut = createWriteStream(join(flags.out, 'validators.jsonl'));
  const warc = flags.warc
    ? new WarcWriter({
        dir: flags.out,
        prefix: 'crawl',
        maxBytes: flags.warcMaxSize,
        info: { robots: 'obey', 'http-header-user-agent': USER_AGENT, isPartOf: task.id, description: `volunteer-crawler crawl ${url.href}` },
      })
    : null;
  let final: TaskResult | null = null;
  const write = async (s: WriteStream, line: string) => {
    if (!s.write(line)) await once(s, 'drain');
  };
  const sink = {
    async upload(r: TaskResult) {
      for (const p of r.pages) await write(pagesOut, JSON.stringify(p) + '\n');
      for (const v of r.validators) await write(validatorsOut, JSON.stringify(v) + '\n');
      if (r.final) final = r;
    },
  };
  const tty = flags.progress && process.stderr.isTTY === true;
  const bar = tty
    ? new cliProgress.SingleBar(
        { stream: process.stderr, format: 'crawling {bar} {value}/{total} pages | {changed} changed | {failed} failed | {queued} queued | {mb} MB', hideCursor: true, clearOnComplete: false },
        cliProgress.Presets.shades_classic,
      )
    : null;
  bar?.start(flags.maxPages, 0, { changed: 0, failed: 0, queued: 0, mb: '0.0' });
  let lastDraw = 0;
  const stop = new AbortController();
  const onSigint = () => stop.abort();
  process.once('SIGINT', onSigint);
  const out = await runTask(task, sink, {
    allowPrivate: flags.allowPrivate,
    ...(flags.maxBandwidth ? { bandwidth: new TokenBucket(flags.maxBandwidth) } : {}),
    ...(warc ? { archive: warc, archiveErrors: flags.warcErrors } : {}),
    signal: stop.signal,
    onProgress: ({ stats, queued }) => {
      if (!bar) return;
      const t = performance.now();
      if (t - lastDraw < 100) return;
      lastDraw = t;
      bar.update(stats.pagesFetched + stats.pagesFailed, { changed: stats.pagesChanged, failed: stats.pagesFailed, queued, mb: (stats.bytes / 1e6).toFixed(1) });
    },
  });
  process.off('SIGINT', onSigint);
  bar?.update(out.stats.pagesFetched + out.stats.pagesFailed, { changed: out.stats.pagesChanged, failed: out.stats.pagesFailed, queued: 0, mb: (out.stats.bytes / 1e6).toFixed(1) });
  bar?.stop();
  pagesOut.end();
  validatorsOut.end();
  let archived: WarcSummary | null = null;
  let warcError: Error | null = null;
  try {
    [, , archived] = await Promise.all([once(pagesOut, 'finish'), once(validatorsOut, 'finish'), warc?.close() ?? null]);
  } catch (err) {
    warcError = err as Error;
  }
  warcError ??= warc?.failure ?? null;
  const f = final as TaskResult | null;
  const summary = {
    url: url.href,
    channel: task.scope,
    status: out.status,
    reason: out.reason,
    stats: out.stats,
    outcomes: out.outcomes,
    interSiteUrls: f?.interSiteUrls ?? [],
    errors: f?.errors ?? [],
    ...(archived ? { warc: { files: archived.files, records: archived.counts, ...(warcError ? { error: warcError.message } : {}) } } : {}),
  };
  writeFileSync(join(flags.out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
  const s = out.stats;
  process.stderr.write(
    `${out.status}${out.reason ? ` (${out.reason})` : ''}: ${s.pagesFetched} pages fetched, ${s.pagesChanged} changed, ${s.pagesUnchanged} unchanged (${s.pagesNotModified} via 304), ${s.pagesFailed} failed, ${(s.bytes / 1e6).toFixed(2)} MB in ${(s.downloadMs / 1000).toFixed(1)} s${warcLine(archived)}; output in ${flags.out}\n`,
  );
  if (warcError) process.stderr.write(`volunteer-crawler crawl: writing the WARC files failed: ${warcError.message}\n`);
  if (out.status === 'refused' || out.status === 'failed' || out.status === 'robots-unavailable' || warcError) process.exitCode = 1;
  if (out.status === 'aborted') process.exitCode = 130;
}

function warcLine(a: WarcSummary | null): string {
  if (!a) return '';
  const c = a.counts;
  return `; WARC: ${a.files.length} file${a.files.length === 1 ? '' : 's'}, ${c.response ?? 0} responses, ${c.revisit ?? 0} revisits, ${c.request ?? 0} requests`;
}

export function registerCrawl(program: Command): void {
  program
    .command('crawl')
    .description('crawl one channel (a host or sub-directory) on this machine and write JSON lines and WARC files')
    .argument('<url>', 'seed URL; the channel is its origin and directory unless --prefix is given', httpUrl)
    .option('--depth <n>', 'maximum link depth from the seed', int('--depth', 0, 1000), 3)
    .option('--filter <regex>', 'only follow URLs matching this regular expression (repeatable; checked for catastrophic backtracking)', collect)
    .option('--prefix <path>', "path prefix of the channel (repeatable; default: the seed's directory)", collect)
    .option('--out <dir>', 'output directory', 'crawl-out')
    .option('--allow-private', 'allow loopback/private/link-local addresses (tests, intranets)', false)
    .option('--max-pages <n>', 'page cap', int('--max-pages', 1, 1_000_000), 1000)
    .option('--delay <ms>', 'politeness delay between requests (robots.txt Crawl-delay may raise it)', int('--delay', 0, 60_000), 1000)
    .option('--timeout <seconds>', 'deadline for the whole crawl', int('--timeout', 1, 7 * 86_400), 3600)
    .option('--max-bandwidth <rate>', 'download bandwidth cap, bytes/s (e.g. 500k, 2M)', bytesArg('--max-bandwidth', 'bytes per second, e.g. 500k or 2M'))
    .option('--known <file>', 'validators.jsonl from an earlier crawl: conditional GET; unchanged pages are not written to pages.jsonl again, and become revisit records in the WARC')
    .option('--no-warc', 'do not write WARC files (crawl-*.warc.gz and their .cdxj indexes)')
    .addOption(new Option('--warc-max-size <bytes>', 'start a new WARC file after this many bytes (e.g. 100M, 1G)').argParser(bytesArg('--warc-max-size', 'bytes, e.g. 100M or 1G')).default(DEFAULT_WARC_MAX_BYTES, '1G'))
    .option('--warc-errors', 'archive 4xx and 5xx responses too (robots.txt, redirects and pages always are)', false)
    .option('--no-progress', 'no progress bar')
    .action(async (url: URL, flags: CrawlFlags, cmd: Command) => crawlCommand(url, flags, cmd));
}
