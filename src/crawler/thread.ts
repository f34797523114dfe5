// A task thread (paper §2.2): crawls one channel with one connection, then
// uploads. robots.txt first; URLtodo (FIFO, spills to disk), URLseen (64-bit
// hashes), Pageseen (known digests) and conditional GET with the known
// validators; stops at max depth, page cap or deadline; every bad response is
// a counted outcome. The page text is spooled to a temp file while crawling
// and uploaded in parts afterwards. With an archive sink it also hands over
// what a WARC file holds (archive-handover.ts).
//
// This file is the thread's life and its fetch loop: the deadline and abort,
// the robots gate, politeness, the owner's budget per request, redirects. What
// each job does lives beside it: frontier.ts (where a URL goes), response.ts
// (what a response becomes), validators.ts (conditional GET), fetch-budget.ts
// (the transfer cap), archive-handover.ts (WARC records), upload.ts (parts).
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { ArchiveHandOver } from './archive-handover.js';
import type { TokenBucket } from './bandwidth.js';
import { Downloader, type FetchResult } from './downloader.js';
import { metered, reserveRoom, type BudgetRoom, type FetchBudget } from './fetch-budget.js';
import { Frontier } from './frontier.js';
import { DigestSet } from './hash.js';
import { normaliseUrl } from './html.js';
import { DEFAULT_LIMITS, ROBOTS_TOKEN, USER_AGENT, type CrawlLimits } from './limits.js';
import { OutcomeLog } from './outcome-log.js';
import { handleResponse, type ResponseContext } from './response.js';
import { fetchRobots } from './robots.js';
import { resolveHost, type OwnerBlockList } from './safety.js';
import { Spool } from './spool.js';
import { emptyStats, inScope, type KnownPage, type Outcome, type ResultSink, type Task, type TaskStats, type TaskStatus } from './task.js';
import { uploadSpool, type PartHeader } from './upload.js';
import { conditionalHeaders } from './validators.js';
import type { Exchange } from './warc/exchange.js';
import type { ArchiveSink } from './warc/writer.js';

export { REQUEST_OVERHEAD_BYTES, type FetchBudget } from './fetch-budget.js';

export interface ThreadOptions {
  allowPrivate?: boolean;
  /** The owner's transfer cap: every request reserves room first and settles what it moved; with none left the thread waits (fetching nothing) until room is made or it is aborted. */
  budget?: FetchBudget;
  /** Told when a request waits for budget (the node then pauses and hands the task on). */
  onBudgetSpent?: () => void;
  /** The owner's never_fetch list, checked on every connection; a hit ends the task 'refused' (outcome 'owner-blocked'). */
  blockList?: OwnerBlockList;
  userAgent?: string;
  robotsToken?: string;
  limits?: Partial<CrawlLimits>;
  bandwidth?: TokenBucket;
  /** Aborting stops the thread without uploading (hand-over on shutdown). */
  signal?: AbortSignal;
  tmpDir?: string;
  /** Wall clock for the deadline and timestamps (epoch ms). */
  now?: () => number;
  /** Where the exchanges to archive go (the crawl command's WARC writer); nothing is captured without it. */
  archive?: ArchiveSink;
  /** Archive 4xx/5xx responses too (default: only robots.txt, redirects, pages and revisits). */
  archiveErrors?: boolean;
  /** Called after every page. */
  onProgress?: (p: { stats: TaskStats; queued: number }) => void;
  /** Called once the crawl is over and the upload begins (an abort no longer stops it). */
  onUploadStart?: () => void;
}

export interface ThreadOutcome {
  status: TaskStatus | 'aborted';
  reason?: string;
  stats: TaskStats;
  outcomes: Partial<Record<Outcome, number>>;
  parts: number;
}

const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/i;
/** A 2xx that is not HTML is not read (one function for all requests, not a closure per request). */
const htmlOnly = (status: number, h: Record<string, string>): Outcome | null => (status >= 200 && status < 300 && !HTML_TYPES.test(h['content-type'] ?? 'text/html') ? 'not-html' : null);
const CONSECUTIVE_FAILURES_LIMIT = 10;
export { emptyResult, emptyStats } from './task.js';

/** Runs one task to completion and uploads its result through the sink. */
export async function runTask(task: Task, sink: ResultSink, opts: ThreadOptions = {}): Promise<ThreadOutcome> {
  return new TaskThread(task, sink, opts).run();
}

class TaskThread {
  private readonly limits: CrawlLimits;
  private readonly now: () => number;
  private readonly stats = emptyStats();
  private readonly log = new OutcomeLog();
  private readonly known = new Map<string, KnownPage>();
  private readonly frontier: Frontier;
  private readonly archive: ArchiveHandOver;
  private readonly stop = new AbortController();
  private stopStatus: TaskStatus | null = null;
  /** Set when the owner's block list refused a connection mid-task: the reason the task ends with. */
  private blockedReason: string | null = null;
  private dl: Downloader | null = null;
  private delayMs = 0;
  private lastRequestEnd = 0;
  private consecutiveFailures = 0;
  private attempted = 0;
  // Upload spool (paper: "write the textual content to a temporary disk file"):
  // changed pages and validators go to disk while crawling, so memory does not
  // grow with the crawl; parts are formed on upload.
  private readonly spool: Spool;
  /** What a response is recorded into (response.ts). */
  private readonly ctx: ResponseContext;
  private startedAt = 0;

  constructor(
    private readonly task: Task,
    private readonly sink: ResultSink,
    private readonly opts: ThreadOptions,
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.now = opts.now ?? Date.now;
    for (const k of task.known) this.known.set(k.url, k);
    this.frontier = new Frontier(task, this.limits, this.log, opts.tmpDir ?? tmpdir());
    this.spool = new Spool(opts.tmpDir ?? tmpdir());
    this.archive = new ArchiveHandOver(opts.archive);
    this.ctx = {
      stats: this.stats,
      log: this.log,
      frontier: this.frontier,
      spool: this.spool,
      archive: this.archive,
      pageSeen: new DigestSet(task.pageDigests),
      limits: this.limits,
      robotsToken: opts.robotsToken ?? ROBOTS_TOKEN,
      archiveErrors: opts.archiveErrors ?? false,
    };
  }

  async run(): Promise<ThreadOutcome> {
    this.startedAt = this.now();
    const external = this.opts.signal;
    const onAbort = () => this.stop.abort();
    external?.addEventListener('abort', onAbort, { once: true });
    const untilDeadline = this.task.deadline - this.now();
    const deadlineTimer = setTimeout(() => {
      this.stopStatus ??= 'deadline';
      this.stop.abort();
    }, Math.max(0, Math.min(untilDeadline, 2 ** 31 - 1)));
    let status: TaskStatus = 'completed';
    let reason: string | undefined;
    try {
      if (external?.aborted) throw new Error('aborted');
      if (untilDeadline <= 0) {
        status = 'deadline';
        reason = 'deadline passed before the crawl started';
      } else {
        const r = await this.crawl();
        status = r.status;
        reason = r.reason;
      }
    } catch (err) {
      if (!external?.aborted) {
        status = 'failed';
        reason = `internal error: ${(err as Error).message}`;
      }
    } finally {
      clearTimeout(deadlineTimer);
      external?.removeEventListener('abort', onAbort);
      this.frontier.todo.close();
      await this.dl?.close();
    }
    this.stats.urlsDiscovered = this.frontier.seen.size;
    this.stats.urlsSpilled = this.frontier.todo.spilledTotal;
    const outcomes = this.log.outcomes;
    if (external?.aborted) {
      this.spool.close();
      await this.opts.archive?.end?.({ keep: false });
      return { status: 'aborted', reason: 'handed over', stats: this.stats, outcomes, parts: 0 };
    }
    this.opts.onUploadStart?.();
    // The archive's records go first, so the manager holds them when the task is done.
    await this.opts.archive?.end?.({ keep: true });
    const parts = await uploadSpool(this.spool, this.sink, this.limits.pagesPerPart, (part, final) => this.partHeader(status, reason, part, final));
    return { status, ...(reason ? { reason } : {}), stats: this.stats, outcomes, parts };
  }

  /** The robots gate, then the fetch loop until URLtodo is empty or the task must stop. */
  private async crawl(): Promise<{ status: TaskStatus; reason?: string }> {
    const t0 = performance.now();
    const { origin } = this.task.scope;
    const host = new URL(origin).hostname;
    const allowPrivate = this.opts.allowPrivate ?? false;
    const resolved = await resolveHost(host, allowPrivate, this.opts.blockList);
    if (!resolved.ok) {
      const code = resolved.error.code;
      const outcome = code === 'EBLOCKED' ? 'owner-blocked' : code === 'EPRIVATE' ? 'private-address' : 'dns-failure';
      this.log.fail(origin, outcome, resolved.error.message);
      return { status: 'refused', reason: resolved.error.message };
    }
    this.dl = new Downloader(origin, {
      allowPrivate,
      ...(this.opts.blockList ? { blockList: this.opts.blockList } : {}),
      userAgent: this.opts.userAgent ?? USER_AGENT,
      limits: this.limits,
      signal: this.stop.signal,
      ...(this.opts.bandwidth ? { bandwidth: this.opts.bandwidth } : {}),
      ...(this.opts.archive ? { onExchange: this.archive.onExchange, now: this.now } : {}),
    });
    try {
      const robotsRoom = await this.reserve(this.limits.maxRobotsBytes);
      if (robotsRoom === null) return { status: this.stopStatus ?? 'failed' };
      const robots = await metered(this.dl.socketBytes, robotsRoom, () => fetchRobots(this.dl as Downloader, origin, this.ctx.robotsToken, this.limits));
      this.frontier.robots = robots;
      this.lastRequestEnd = performance.now();
      // robots.txt and any redirect on the way to it.
      for (const ex of this.archive.take()) await this.archive.response(ex);
      if (this.stop.signal.aborted) return { status: this.stopStatus ?? 'failed' };
      if (robots.kind === 'blocked') {
        this.log.fail(origin, 'owner-blocked', robots.detail);
        return { status: 'refused', reason: robots.detail };
      }
      if (robots.kind === 'unavailable') {
        return { status: 'robots-unavailable', reason: `robots.txt unavailable (${robots.detail}): site disallowed for now` };
      }
      this.delayMs = Math.max(this.task.delayMs, Math.min(robots.crawlDelayMs, this.limits.maxCrawlDelayMs));
      this.stats.crawlDelayMs = this.delayMs;

      for (const s of this.task.seeds) this.frontier.consider(s, 0, true);
      const known = [...this.known.values()].sort((a, b) => (a.depth ?? 0) - (b.depth ?? 0));
      for (const k of known) this.frontier.consider(k.url, k.depth ?? 0, true);

      const todo = this.frontier.todo;
      let status: TaskStatus = 'completed';
      let reason: string | undefined;
      for (;;) {
        if (this.stop.signal.aborted) {
          status = this.stopStatus ?? 'failed';
          break;
        }
        if (todo.length === 0) break;
        if (this.attempted >= this.task.maxPages) {
          status = 'page-cap';
          this.log.count('page-cap', todo.length);
          break;
        }
        const item = todo.shift() as { url: string; depth: number };
        this.attempted++;
        await this.fetchPage(item.url, item.depth);
        this.opts.onProgress?.({ stats: this.snapshot(), queued: todo.length });
        if (this.consecutiveFailures >= CONSECUTIVE_FAILURES_LIMIT) {
          status = 'failed';
          reason = `${CONSECUTIVE_FAILURES_LIMIT} consecutive network failures: host unreachable`;
          break;
        }
      }
      if (this.stop.signal.aborted && this.stopStatus) status = this.stopStatus;
      if (this.blockedReason !== null) return { status: 'refused', reason: this.blockedReason };
      return reason ? { status, reason } : { status };
    } finally {
      this.stats.downloadMs = performance.now() - t0;
      this.stats.requests = this.dl.requests;
      this.stats.bytes = this.dl.wireBytes;
      this.stats.rttMs = this.dl.minTtfbMs === null ? null : Math.round(this.dl.minTtfbMs * 100) / 100;
    }
  }

  private snapshot(): TaskStats {
    return { ...this.stats, requests: this.dl?.requests ?? 0, bytes: this.dl?.wireBytes ?? 0, urlsDiscovered: this.frontier.seen.size };
  }

  /** Room for one request under the owner's budget (fetch-budget.ts); null when the task was stopped meanwhile. */
  private reserve(bodyBytes: number): Promise<BudgetRoom | null> {
    return reserveRoom(this.opts.budget, bodyBytes, this.stop.signal, this.opts.onBudgetSpent);
  }

  /** False when the task was stopped while waiting. */
  private async politeWait(): Promise<boolean> {
    const wait = this.lastRequestEnd + this.delayMs - performance.now();
    if (wait > 0) {
      try {
        await sleep(wait, undefined, { signal: this.stop.signal });
      } catch {
        return false;
      }
    }
    return !this.stop.signal.aborted;
  }

  /** Fetches one URL of URLtodo, following redirects inside the channel, and hands the final response to response.ts. */
  private async fetchPage(startUrl: string, depth: number): Promise<void> {
    const dl = this.dl as Downloader;
    const frontier = this.frontier;
    let url = new URL(startUrl);
    const known = this.known.get(startUrl);
    for (let hop = 0; ; hop++) {
      // With no delay there is nothing to wait for (and no promise to make per page).
      if (this.delayMs > 0 ? !(await this.politeWait()) : this.stop.signal.aborted) return;
      const headers = hop === 0 ? conditionalHeaders(known) : [];
      const room = await this.reserve(this.limits.maxBodyBytes);
      if (room === null) return; // aborted while waiting for budget
      const fetchedAt = this.now();
      const r: FetchResult = await metered(dl.socketBytes, room, () => dl.get(url, { headers, accept: htmlOnly }));
      this.lastRequestEnd = performance.now();
      const ex: Exchange | undefined = this.archive.take()[0];
      if (!r.ok) {
        if (this.stop.signal.aborted) return; // deadline or hand-over: not the page's fault
        this.stats.pagesFailed++;
        this.consecutiveFailures++;
        this.log.fail(url.href, r.outcome, r.detail);
        if (r.outcome === 'owner-blocked') {
          // The owner's list changed, or the host now resolves into a blocked range: stop the task.
          this.blockedReason = r.detail;
          this.stop.abort();
        }
        return;
      }
      this.consecutiveFailures = 0;
      const s = r.status;
      if (s >= 300 && s < 400 && s !== 304) {
        // Archived whatever comes of it: a replay follows the redirect the crawl saw.
        if (ex) await this.archive.response(ex);
        const loc = r.headers['location'];
        const next = loc ? normaliseUrl(loc, url) : null;
        if (!next) {
          this.stats.pagesFailed++;
          this.log.fail(url.href, 'redirect-invalid', `status ${s}, location ${JSON.stringify(loc ?? null)}`);
          return;
        }
        if (!inScope(next, this.task.scope)) {
          this.log.count(next.origin === this.task.scope.origin ? 'redirect-out-of-scope' : 'redirect-offsite');
          frontier.reportInterSite(next.href);
          return;
        }
        if (hop + 1 > this.limits.maxRedirects) {
          this.stats.pagesFailed++;
          this.log.fail(startUrl, 'redirect-limit', `more than ${this.limits.maxRedirects} redirects`);
          return;
        }
        if (next.href.length > this.limits.maxUrlLength) {
          this.log.count('url-too-long');
          return;
        }
        if (!frontier.passesFilters(next.href) || !(frontier.robots?.isAllowed(next.href) ?? true)) {
          this.log.count('redirect-out-of-scope');
          return;
        }
        if (frontier.seen.has(next.href) && next.href !== startUrl) {
          this.log.count('redirect-followed'); // the target is (or was) crawled on its own
          return;
        }
        frontier.seen.add(next.href);
        this.log.count('redirect-followed');
        url = next;
        continue;
      }
      this.stats.pagesFetched++;
      await handleResponse(this.ctx, { startUrl, url, depth, fetchedAt, known, ex }, r);
      return;
    }
  }

  /** Everything in a result part but its records; the final part carries the outcomes, errors and inter-site URLs. */
  private partHeader(status: TaskStatus, reason: string | undefined, part: number, final: boolean): PartHeader {
    return {
      taskId: this.task.id,
      channel: this.task.scope,
      part,
      final,
      status,
      ...(reason ? { reason } : {}),
      startedAt: this.startedAt,
      finishedAt: this.now(),
      interSiteUrls: final ? this.frontier.interSiteUrls() : [],
      outcomes: final ? this.log.outcomes : {},
      errors: final ? this.log.errors : [],
      stats: this.stats,
    };
  }
}
