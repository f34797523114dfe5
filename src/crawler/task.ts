// The crawl task (paper §2.1) and its result: the contract between the manager,
// the DHT node that routes tasks, and the task thread that runs them.
//
// A task describes one *channel*: a web host (origin) or one or more
// sub-directories of it (path prefixes). Every task is validated where it
// enters (`parseTask`): schema, sizes, URL schemes, scope and filter patterns,
// including a ReDoS check with `recheck`. An invalid task is rejected with a
// reason and never half-run.
import { createRequire } from 'node:module';
import { z } from 'zod';
import type { ArchiveSink } from './warc/writer.js';

type CheckSync = typeof import('recheck').checkSync;
let checkSyncFn: CheckSync | null = null;
/** recheck is loaded on first use: it is large (~25 MB RSS) and only tasks with filters need it. */
function checkSync(...a: Parameters<CheckSync>): ReturnType<CheckSync> {
  checkSyncFn ??= (createRequire(import.meta.url)('recheck') as typeof import('recheck')).checkSync;
  return checkSyncFn(...a);
}

/** Hard caps applied at validation. */
export const TASK_LIMITS = {
  idLength: 128,
  urlLength: 2048,
  seeds: 10_000,
  pathPrefixes: 64,
  filters: 32,
  filterLength: 1000,
  expectedPages: 10_000_000,
  maxDepth: 1000,
  maxPages: 1_000_000,
  digests: 1_000_000,
  validators: 1_000_000,
  delayMs: 60_000,
  /** Bounded time recheck may spend on one pattern. */
  redosCheckMs: 1000,
} as const;

/** Validators (and depth) of a page known from the previous crawl. */
export interface KnownPage {
  url: string;
  etag?: string;
  lastModified?: string;
  /** 32-bit SHA-1 digest of the body last time. */
  digest?: number;
  /** Depth at which it was found last time (default 0). */
  depth?: number;
  /** WARC payload digest ("sha1:<base32>") of the body as transferred last time. */
  payloadDigest?: string;
  /** When the response holding that payload was archived (epoch ms): a revisit's WARC-Refers-To-Date. */
  capturedAt?: number;
}

export interface Task {
  /** Unique id chosen by the manager. */
  id: string;
  /** The channel: an origin and path prefixes ('/' = the whole host). */
  scope: { origin: string; pathPrefixes: string[] };
  /** Seed URLs: index pages plus inter-site URLs found in other channels. All inside the scope. */
  seeds: string[];
  /** URL filter: a discovered URL is crawled only if it matches at least one (empty = all). */
  filters: string[];
  /** Page count from history; sizes URLseen. */
  expectedPages: number;
  /** Maximum link depth from the seeds (seeds are depth 0). */
  maxDepth: number;
  /** Page cap (beyond the paper): a spider-trap guard. */
  maxPages: number;
  /** Pageseen: 32-bit SHA-1 digests of known page bodies (uint32). */
  pageDigests: number[];
  /** 32-bit SHA-1 digests of already-discovered inter-site URLs (uint32). */
  interSiteDigests: number[];
  /** Validators of known pages for conditional GET (beyond the paper). */
  known: KnownPage[];
  /** Absolute deadline, epoch milliseconds. */
  deadline: number;
  /** 'full': the manager archives the exchanges — the crawler captures them and
   * hands them to its result sink's `archiveFor` (the volunteer uploads them). */
  archive?: 'full';
  /** Politeness delay between requests in ms (robots Crawl-delay may raise it). Default 1000. */
  delayMs: number;
}

export class TaskValidationError extends Error {
  override readonly name = 'TaskValidationError';
  constructor(readonly reason: string) {
    super(`invalid task: ${reason}`);
  }
}

const uint32 = z.number().int().min(0).max(0xffffffff);

const knownSchema = z.object({
  url: z.string().max(TASK_LIMITS.urlLength),
  etag: z.string().max(512).optional(),
  lastModified: z.string().max(128).optional(),
  digest: uint32.optional(),
  depth: z.number().int().min(0).max(TASK_LIMITS.maxDepth).optional(),
  payloadDigest: z.string().max(128).regex(/^[a-z0-9-]+:[A-Za-z0-9+/=]+$/, 'payloadDigest is not "<algorithm>:<digest>"').optional(),
  capturedAt: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});

const taskSchema = z.object({
  id: z.string().min(1).max(TASK_LIMITS.idLength).regex(/^[A-Za-z0-9._:@/+=-]+$/, 'id has characters outside [A-Za-z0-9._:@/+=-]'),
  scope: z.object({
    origin: z.string().max(TASK_LIMITS.urlLength),
    pathPrefixes: z.array(z.string().min(1).max(TASK_LIMITS.urlLength)).min(1).max(TASK_LIMITS.pathPrefixes).default(['/']),
  }),
  seeds: z.array(z.string().max(TASK_LIMITS.urlLength)).min(1).max(TASK_LIMITS.seeds),
  filters: z.array(z.string().min(1).max(TASK_LIMITS.filterLength)).max(TASK_LIMITS.filters).default([]),
  expectedPages: z.number().int().min(0).max(TASK_LIMITS.expectedPages).default(1000),
  maxDepth: z.number().int().min(0).max(TASK_LIMITS.maxDepth),
  maxPages: z.number().int().min(1).max(TASK_LIMITS.maxPages).default(10_000),
  pageDigests: z.array(uint32).max(TASK_LIMITS.digests).default([]),
  interSiteDigests: z.array(uint32).max(TASK_LIMITS.digests).default([]),
  known: z.array(knownSchema).max(TASK_LIMITS.validators).default([]),
  deadline: z.number().int().positive(),
  delayMs: z.number().int().min(0).max(TASK_LIMITS.delayMs).default(1000),
  archive: z.literal('full').optional(),
});

/** Normalises an origin string; throws a reason on failure. */
export function parseOrigin(origin: string): string {
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    throw new TaskValidationError(`scope.origin is not a URL: ${JSON.stringify(origin)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TaskValidationError(`scope.origin has scheme ${u.protocol}; only http and https are crawled`);
  if (u.username || u.password) throw new TaskValidationError('scope.origin must not carry credentials');
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) throw new TaskValidationError('scope.origin must be scheme://host[:port] only; use scope.pathPrefixes for sub-directories');
  return u.origin;
}

/** True if the (normalised) URL is inside the channel. */
export function inScope(url: URL, scope: Task['scope']): boolean {
  if (url.origin !== scope.origin) return false;
  for (const p of scope.pathPrefixes) if (url.pathname.startsWith(p)) return true;
  return false;
}

const redosCache = new Map<string, string | null>();

/**
 * Checks a filter pattern: it must compile, and recheck must call it safe
 * within a bounded time. Exponential, cubic-or-worse and unknown verdicts are
 * rejected; quadratic ones are accepted because URLs are capped at
 * TASK_LIMITS.urlLength characters (≤ ~4M steps). Returns a reason or null.
 */
export function checkFilterPattern(source: string): string | null {
  const cached = redosCache.get(source);
  if (cached !== undefined) return cached;
  let reason: string | null = null;
  try {
    new RegExp(source);
  } catch (err) {
    reason = `filter ${JSON.stringify(source)} does not compile: ${(err as Error).message}`;
  }
  if (reason === null) {
    try {
      const d = checkSync(source, '', { timeout: TASK_LIMITS.redosCheckMs });
      if (d.status === 'vulnerable') {
        const c = d.complexity;
        const tolerable = c.type === 'polynomial' && c.degree <= 2;
        if (!tolerable) reason = `filter ${JSON.stringify(source)} is vulnerable to catastrophic backtracking (${c.type}${c.type === 'polynomial' ? ` degree ${c.degree}` : ''})`;
      } else if (d.status === 'unknown') {
        reason = `filter ${JSON.stringify(source)} could not be proven safe from catastrophic backtracking (${d.error.kind})`;
      }
    } catch (err) {
      reason = `filter ${JSON.stringify(source)} could not be checked: ${(err as Error).message}`;
    }
  }
  if (redosCache.size > 1000) redosCache.clear();
  redosCache.set(source, reason);
  return reason;
}

/** Validates and normalises an untrusted task. Throws TaskValidationError with a reason. */
export function parseTask(json: unknown): Task {
  const r = taskSchema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'task';
    throw new TaskValidationError(`${where}: ${issue?.message ?? 'invalid'}`);
  }
  const t = r.data;
  const origin = parseOrigin(t.scope.origin);
  for (const p of t.scope.pathPrefixes) {
    if (!p.startsWith('/')) throw new TaskValidationError(`scope.pathPrefixes: ${JSON.stringify(p)} must start with '/'`);
  }
  const scope = { origin, pathPrefixes: [...new Set(t.scope.pathPrefixes)] };
  const checkUrl = (s: string, where: string): string => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      throw new TaskValidationError(`${where}: not a URL: ${JSON.stringify(s.slice(0, 200))}`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TaskValidationError(`${where}: scheme ${u.protocol} not allowed`);
    if (u.username || u.password) throw new TaskValidationError(`${where}: credentials in URL not allowed`);
    u.hash = '';
    if (u.href.length > TASK_LIMITS.urlLength) throw new TaskValidationError(`${where}: URL longer than ${TASK_LIMITS.urlLength}`);
    if (!inScope(u, scope)) throw new TaskValidationError(`${where}: ${u.href} is outside the channel ${origin} ${scope.pathPrefixes.join(',')}`);
    return u.href;
  };
  const seeds = t.seeds.map((s, i) => checkUrl(s, `seeds.${i}`));
  const known: KnownPage[] = t.known.map((k, i) => {
    const out: KnownPage = { url: checkUrl(k.url, `known.${i}.url`) };
    if (k.etag !== undefined) out.etag = k.etag;
    if (k.lastModified !== undefined) out.lastModified = k.lastModified;
    if (k.digest !== undefined) out.digest = k.digest;
    if (k.depth !== undefined) out.depth = k.depth;
    if (k.payloadDigest !== undefined) out.payloadDigest = k.payloadDigest;
    if (k.capturedAt !== undefined) out.capturedAt = k.capturedAt;
    return out;
  });
  t.filters.forEach((f) => {
    const reason = checkFilterPattern(f);
    if (reason) throw new TaskValidationError(`filters: ${reason}`);
  });
  if (!Number.isSafeInteger(t.deadline)) throw new TaskValidationError('deadline must be epoch milliseconds');
  return {
    id: t.id,
    scope,
    seeds: [...new Set(seeds)],
    filters: t.filters,
    expectedPages: t.expectedPages,
    maxDepth: t.maxDepth,
    maxPages: t.maxPages,
    pageDigests: t.pageDigests,
    interSiteDigests: t.interSiteDigests,
    known,
    deadline: t.deadline,
    delayMs: t.delayMs,
    ...(t.archive !== undefined ? { archive: t.archive } : {}),
  };
}

// ---------------------------------------------------------------------------
// Results

/** How a fetch (or a skipped link) ended. Every bad response maps to one. */
export const OUTCOMES = [
  'changed', // 200, digest not in Pageseen: uploaded
  'unchanged', // 200, digest already known: not uploaded
  'not-modified', // 304 to a conditional GET
  'redirect-followed',
  'redirect-limit',
  'redirect-offsite', // cross-host target reported as inter-site URL
  'redirect-out-of-scope',
  'redirect-invalid',
  'not-html',
  'too-large',
  'decompressed-too-large',
  'bad-encoding',
  'charset-fallback', // unknown charset, decoded as UTF-8
  'http-4xx',
  'http-5xx',
  'http-other',
  'dns-failure',
  'private-address',
  'owner-blocked', // on the volunteer owner's never_fetch list (the task ends 'refused')
  'connect-timeout',
  'headers-timeout',
  'body-timeout',
  'connection-error',
  'robots-disallowed',
  'url-too-long',
  'depth-limit',
  'page-cap',
  'filtered',
  'nofollow',
  'noindex',
  'error',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** A changed page, uploaded with its text. */
export interface PageRecord {
  url: string;
  /** Final URL when redirects were followed inside the channel. */
  finalUrl?: string;
  status: number;
  depth: number;
  fetchedAt: number;
  contentType: string;
  /** Body bytes after decompression. */
  bytes: number;
  digest: number;
  etag?: string;
  lastModified?: string;
  title?: string;
  /** Extracted text (scripts/styles dropped), whitespace collapsed. */
  text: string;
  /** true when meta robots said noindex: text omitted. */
  noindex?: boolean;
}

/** New validators of every live page (changed or not): next task's `known` and `pageDigests`. */
export type ValidatorRecord = KnownPage & { url: string; digest: number; depth: number };

export interface TaskStats {
  pagesFetched: number; // responses received for page URLs (any status)
  pagesChanged: number;
  pagesUnchanged: number; // 200 with known digest + 304
  pagesNotModified: number; // 304 only
  pagesFailed: number;
  requests: number; // including robots.txt and redirects
  bytes: number; // bytes on the wire (bodies)
  downloadMs: number; // wall time of the crawl phase
  rttMs: number | null; // median time-to-headers for tiny responses (robots, 304, redirects) or all
  crawlDelayMs: number; // the effective politeness delay
  urlsDiscovered: number; // distinct URLs in URLseen
  urlsSpilled: number; // URLtodo entries that went through the spill file
}

export type TaskStatus =
  | 'completed' // frontier exhausted (within depth)
  | 'page-cap'
  | 'deadline'
  | 'robots-unavailable' // robots.txt 5xx/unreachable: disallowed for now
  | 'refused' // private address, unresolvable host, or blocked by the volunteer's owner (outcomes['owner-blocked'])
  | 'cancelled' // overdue before it started (task manager)
  | 'failed';

/**
 * What a task uploads. Large crawls upload in several parts (the page text is
 * spooled to a temp file during the crawl, as in the paper, and streamed out
 * afterwards): parts 0..n-1 carry pages and validators; the part with
 * `final: true` carries status, statistics and inter-site URLs as well.
 */
export interface TaskResult {
  taskId: string;
  channel: Task['scope'];
  part: number;
  final: boolean;
  status: TaskStatus;
  reason?: string;
  startedAt: number;
  finishedAt: number;
  pages: PageRecord[];
  validators: ValidatorRecord[];
  /** Digests of the changed pages in this part (new Pageseen entries). */
  newDigests: number[];
  /** Inter-site URLs not already known (final part). */
  interSiteUrls: string[];
  /** Counts per outcome (final part). */
  outcomes: Partial<Record<Outcome, number>>;
  /** A sample of failures (≤ 100, final part). */
  errors: { url: string; outcome: Outcome; detail?: string }[];
  stats: TaskStats;
}

export interface ResultSink {
  upload(result: TaskResult): Promise<void>;
  /** Where a task that asks for its exchanges (`archive: 'full'`) sends them
   * (a volunteer uploads them to the manager); none: nothing is captured. */
  archiveFor?(task: Task): ArchiveSink | undefined;
}

// ---------------------------------------------------------------------------
// The task manager contract (implemented by `TaskManager` in ./manager.ts):
//   new TaskManager(opts: TaskManagerOptions)
//   submit(task: Task): 'accepted' | 'full'
//   load(): TaskLoad
//   drain(): Promise<Task[]>   stop accepting, abort running, return queued + running tasks
//   close(): Promise<void>

export interface TaskManagerOptions {
  /** Concurrent task threads (default 5). */
  threads?: number;
  /** Tasks waiting beyond the running ones (default 5). */
  queue?: number;
  /** Shared bandwidth cap in bytes/s across all threads (default unlimited). */
  maxBandwidth?: number;
  /** Allow loopback/private/link-local targets (tests, intranets). Default false. */
  allowPrivate?: boolean;
  sink: ResultSink;
}

export interface TaskLoad {
  running: number;
  queued: number;
  free: number;
  /** Task threads the runner offers now: its thread count while it takes
   * tasks, only its running ones while paused or draining. Lets the manager's
   * CAF count threads exactly (src/manager/crawler-load.ts); volunteers before
   * session 12 leave it out and the manager infers it from the other three. */
  threads?: number;
}

/** All-zero statistics: a fresh thread's, and a cancelled task's report. */
export function emptyStats(): TaskStats {
  return {
    pagesFetched: 0,
    pagesChanged: 0,
    pagesUnchanged: 0,
    pagesNotModified: 0,
    pagesFailed: 0,
    requests: 0,
    bytes: 0,
    downloadMs: 0,
    rttMs: null,
    crawlDelayMs: 0,
    urlsDiscovered: 0,
    urlsSpilled: 0,
  };
}

/** A final result with no pages: what a task reports when it never ran
 * (cancelled while queued) or, in tests, a stand-in for a crawl. */
export function emptyResult(task: Task, status: TaskResult['status'], startedAt: number, finishedAt: number): TaskResult {
  return {
    taskId: task.id,
    channel: task.scope,
    part: 0,
    final: true,
    status,
    startedAt,
    finishedAt,
    pages: [],
    validators: [],
    newDigests: [],
    interSiteUrls: [],
    outcomes: {},
    errors: [],
    stats: emptyStats(),
  };
}
