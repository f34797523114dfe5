// A task thread (paper §2.2): crawls one channel with one connection, then
// uploads. robots.txt first; URLtodo (FIFO, spills to disk), URLseen (64-bit
// hashes), Pageseen (known digests) and conditional GET with the known
// validators; stops at max depth, page cap or deadline; every bad response is
// a counted outcome. The page text is spooled to a temp file while crawling
// and uploaded in parts afterwards. With an archive sink it also hands over
// what a WARC file holds: robots.txt and redirect responses, changed pages as
// response records, unchanged ones as revisits (a 304: server-not-modified; a
// 200 whose payload digest is the known one: identical-payload-digest), and
// 4xx/5xx responses when asked.
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TokenBucket } from './bandwidth.js';
import { Downloader, type FetchResult } from './downloader.js';
import { DigestSet, sha1, sha1_32 } from './hash.js';
import { decodeBody, normaliseUrl, parseHtml } from './html.js';
import { DEFAULT_LIMITS, ROBOTS_TOKEN, USER_AGENT, type CrawlLimits } from './limits.js';
import { fetchRobots, type RobotsRules } from './robots.js';
import { resolveHost, type OwnerBlockList } from './safety.js';
import { Spool } from './spool.js';
import {
  emptyStats,
  inScope,
  type KnownPage,
  type Outcome,
  type PageRecord,
  type ResultSink,
  type Task,
  type TaskResult,
  type TaskStats,
  type TaskStatus,
  type ValidatorRecord,
} from './task.js';
import { UrlSeen } from './urlseen.js';
import { UrlTodo } from './urltodo.js';
import { sha1Label } from './warc/digest.js';
import type { Exchange } from './warc/exchange.js';
import type { RefersTo, RevisitProfile } from './warc/record.js';
import type { ArchiveSink } from './warc/writer.js';

/** Room for the bytes of one request (the owner's transfer cap; src/node/ledger.ts fits). */
export interface FetchBudget {
  /** Room for one fetch of at most `maxBytes`; null = none left now. */
  reserve(maxBytes: number): { settle(down: number, up?: number): void } | null;
}

/** Bytes a request and a response's head take on the wire beyond the body, about (counted with the body against the owner's cap). */
export const REQUEST_OVERHEAD_BYTES = 64 * 1024;
/** While the budget is spent, a thread asks again this often (the owner may raise the cap; a pause hands the task on). */
const BUDGET_RETRY_MS = 1000;

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
  private readonly outcomes: Partial<Record<Outcome, number>> = {};
  private readonly errors: TaskResult['errors'] = [];
  private readonly interSite = new Set<string>();
  private readonly knownInterSite: DigestSet;
  private readonly pageSeen: DigestSet;
  private readonly known = new Map<string, KnownPage>();
  private readonly filters: RegExp[];
  private readonly seen: UrlSeen;
  private readonly todo: UrlTodo;
  private readonly stop = new AbortController();
  private stopStatus: TaskStatus | null = null;
  /** Set when the owner's block list refused a connection mid-task: the reason the task ends with. */
  private blockedReason: string | null = null;
  private dl: Downloader | null = null;
  private robots: RobotsRules | null = null;
  private delayMs = 0;
  private lastRequestEnd = 0;
  private consecutiveFailures = 0;
  private attempted = 0;
  /** Exchanges the downloader captured since they were last taken (archive on). */
  private captured: Exchange[] = [];
  // Upload spool (paper: "write the textual content to a temporary disk file"):
  // changed pages and validators go to disk while crawling, so memory does not
  // grow with the crawl; parts are formed on upload.
  private readonly spool: Spool;
  private startedAt = 0;

  constructor(
    private readonly task: Task,
    private readonly sink: ResultSink,
    private readonly opts: ThreadOptions,
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.now = opts.now ?? Date.now;
    this.knownInterSite = new DigestSet(task.interSiteDigests);
    this.pageSeen = new DigestSet(task.pageDigests);
    for (const k of task.known) this.known.set(k.url, k);
    this.filters = task.filters.map((f) => new RegExp(f));
    this.seen = new UrlSeen(Math.max(task.expectedPages, task.known.length, task.seeds.length));
    this.todo = new UrlTodo(this.limits.todoMemory, opts.tmpDir ?? tmpdir());
    this.spool = new Spool(opts.tmpDir ?? tmpdir());
  }

  private count(o: Outcome, n = 1): void {
    this.outcomes[o] = (this.outcomes[o] ?? 0) + n;
  }

  private fail(url: string, outcome: Outcome, detail?: string): void {
    this.count(outcome);
    if (this.errors.length < 100) this.errors.push(detail ? { url, outcome, detail: detail.slice(0, 500) } : { url, outcome });
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
      this.todo.close();
      await this.dl?.close();
    }
    this.stats.urlsDiscovered = this.seen.size;
    this.stats.urlsSpilled = this.todo.spilledTotal;
    if (external?.aborted) {
      this.cleanupSpool();
      await this.opts.archive?.end?.({ keep: false });
      return { status: 'aborted', reason: 'handed over', stats: this.stats, outcomes: this.outcomes, parts: 0 };
    }
    this.opts.onUploadStart?.();
    // The archive's records go first, so the manager holds them when the task is done.
    await this.opts.archive?.end?.({ keep: true });
    const parts = await this.upload(status, reason);
    return { status, ...(reason ? { reason } : {}), stats: this.stats, outcomes: this.outcomes, parts };
  }

  private async crawl(): Promise<{ status: TaskStatus; reason?: string }> {
    const t0 = performance.now();
    const { origin } = this.task.scope;
    const host = new URL(origin).hostname;
    const allowPrivate = this.opts.allowPrivate ?? false;
    const resolved = await resolveHost(host, allowPrivate, this.opts.blockList);
    if (!resolved.ok) {
      const code = resolved.error.code;
      const outcome = code === 'EBLOCKED' ? 'owner-blocked' : code === 'EPRIVATE' ? 'private-address' : 'dns-failure';
      this.fail(origin, outcome, resolved.error.message);
      return { status: 'refused', reason: resolved.error.message };
    }
    this.dl = new Downloader(origin, {
      allowPrivate,
      ...(this.opts.blockList ? { blockList: this.opts.blockList } : {}),
      userAgent: this.opts.userAgent ?? USER_AGENT,
      limits: this.limits,
      signal: this.stop.signal,
      ...(this.opts.bandwidth ? { bandwidth: this.opts.bandwidth } : {}),
      ...(this.opts.archive ? { onExchange: (ex: Exchange) => void this.captured.push(ex), now: this.now } : {}),
    });
    try {
      const robotsRoom = await this.reserve(this.limits.maxRobotsBytes);
      if (robotsRoom === null) return { status: this.stopStatus ?? 'failed' };
      this.robots = await this.metered(robotsRoom, () => fetchRobots(this.dl as Downloader, origin, this.opts.robotsToken ?? ROBOTS_TOKEN, this.limits));
      this.lastRequestEnd = performance.now();
      // robots.txt and any redirect on the way to it.
      for (const ex of this.takeCaptured()) await this.archiveResponse(ex);
      if (this.stop.signal.aborted) return { status: this.stopStatus ?? 'failed' };
      if (this.robots.kind === 'blocked') {
        this.fail(origin, 'owner-blocked', this.robots.detail);
        return { status: 'refused', reason: this.robots.detail };
      }
      if (this.robots.kind === 'unavailable') {
        return { status: 'robots-unavailable', reason: `robots.txt unavailable (${this.robots.detail}): site disallowed for now` };
      }
      this.delayMs = Math.max(this.task.delayMs, Math.min(this.robots.crawlDelayMs, this.limits.maxCrawlDelayMs));
      this.stats.crawlDelayMs = this.delayMs;

      for (const s of this.task.seeds) this.consider(s, 0, true);
      const known = [...this.known.values()].sort((a, b) => (a.depth ?? 0) - (b.depth ?? 0));
      for (const k of known) this.consider(k.url, k.depth ?? 0, true);

      let status: TaskStatus = 'completed';
      let reason: string | undefined;
      for (;;) {
        if (this.stop.signal.aborted) {
          status = this.stopStatus ?? 'failed';
          break;
        }
        if (this.todo.length === 0) break;
        if (this.attempted >= this.task.maxPages) {
          status = 'page-cap';
          this.count('page-cap', this.todo.length);
          break;
        }
        const item = this.todo.shift() as { url: string; depth: number };
        this.attempted++;
        await this.fetchPage(item.url, item.depth);
        this.opts.onProgress?.({ stats: this.snapshot(), queued: this.todo.length });
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
    return { ...this.stats, requests: this.dl?.requests ?? 0, bytes: this.dl?.wireBytes ?? 0, urlsDiscovered: this.seen.size };
  }

  private passesFilters(url: string): boolean {
    if (this.filters.length === 0) return true;
    for (const f of this.filters) if (f.test(url)) return true;
    return false;
  }

  /**
   * Routes a URL: inside the channel → URLtodo (if depth, filters, robots and
   * URLseen allow); outside → an inter-site URL. Seeds and known pages skip
   * the filters.
   */
  private consider(url: string, depth: number, trusted: boolean, parsed?: URL): void {
    if (url.length > this.limits.maxUrlLength) {
      this.count('url-too-long');
      return;
    }
    let u: URL;
    if (parsed) u = parsed;
    else {
      try {
        u = new URL(url);
      } catch {
        return;
      }
    }
    if (!inScope(u, this.task.scope)) {
      this.reportInterSite(url);
      return;
    }
    if (!this.seen.add(url)) return; // already discovered (one hash for the test and the insert)
    if (depth > this.task.maxDepth) {
      this.count('depth-limit');
      return;
    }
    if (!trusted && !this.passesFilters(url)) {
      this.count('filtered');
      return;
    }
    if (this.robots && !this.robots.isAllowed(url)) {
      this.count('robots-disallowed');
      return;
    }
    this.todo.push({ url, depth });
  }

  private reportInterSite(url: string): void {
    if (url.length > this.limits.maxUrlLength) {
      this.count('url-too-long');
      return;
    }
    if (this.interSite.has(url)) return;
    if (this.interSite.size >= this.limits.maxInterSiteUrls) return;
    if (this.knownInterSite.size > 0 && this.knownInterSite.has(sha1_32(url))) return;
    this.interSite.add(url);
  }

  /** Room for one request of at most `bodyBytes` of body, waiting while the owner's budget is spent; null when the task was stopped meanwhile. */
  private async reserve(bodyBytes: number): Promise<{ settle(down: number, up?: number): void } | null> {
    const budget = this.opts.budget;
    const free = { settle: () => undefined };
    if (budget === undefined) return this.stop.signal.aborted ? null : free;
    for (let told = false; ; told = true) {
      if (this.stop.signal.aborted) return null;
      const room = budget.reserve(bodyBytes + REQUEST_OVERHEAD_BYTES);
      if (room !== null) return room;
      if (!told) this.opts.onBudgetSpent?.();
      try {
        await sleep(BUDGET_RETRY_MS, undefined, { signal: this.stop.signal });
      } catch {
        return null;
      }
    }
  }

  /** Runs one request against its reservation and settles what its connection moved, as the OS counts it (socket-bytes.ts: heads, bodies as sent, TLS). One request at a time per connection, so the difference is this request's (a new connection's handshake included). */
  private async metered<T>(room: { settle(down: number, up?: number): void }, fetch: () => Promise<T>): Promise<T> {
    const sock = (this.dl as Downloader).socketBytes;
    const read0 = sock.read;
    const written0 = sock.written;
    try {
      return await fetch();
    } finally {
      room.settle(sock.read - read0, sock.written - written0);
    }
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

  private async fetchPage(startUrl: string, depth: number): Promise<void> {
    const dl = this.dl as Downloader;
    let url = new URL(startUrl);
    const known = this.known.get(startUrl);
    for (let hop = 0; ; hop++) {
      // With no delay there is nothing to wait for (and no promise to make per page).
      if (this.delayMs > 0 ? !(await this.politeWait()) : this.stop.signal.aborted) return;
      const headers: string[] = [];
      if (hop === 0 && known?.etag) headers.push('if-none-match', known.etag);
      if (hop === 0 && known?.lastModified) headers.push('if-modified-since', known.lastModified);
      const room = await this.reserve(this.limits.maxBodyBytes);
      if (room === null) return; // aborted while waiting for budget
      const fetchedAt = this.now();
      const r: FetchResult = await this.metered(room, () => dl.get(url, { headers, accept: htmlOnly }));
      this.lastRequestEnd = performance.now();
      const ex = this.takeCaptured()[0];
      if (!r.ok) {
        if (this.stop.signal.aborted) return; // deadline or hand-over: not the page's fault
        this.stats.pagesFailed++;
        this.consecutiveFailures++;
        this.fail(url.href, r.outcome, r.detail);
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
        if (ex) await this.archiveResponse(ex);
        const loc = r.headers['location'];
        const next = loc ? normaliseUrl(loc, url) : null;
        if (!next) {
          this.stats.pagesFailed++;
          this.fail(url.href, 'redirect-invalid', `status ${s}, location ${JSON.stringify(loc ?? null)}`);
          return;
        }
        if (!inScope(next, this.task.scope)) {
          this.count(next.origin === this.task.scope.origin ? 'redirect-out-of-scope' : 'redirect-offsite');
          this.reportInterSite(next.href);
          return;
        }
        if (hop + 1 > this.limits.maxRedirects) {
          this.stats.pagesFailed++;
          this.fail(startUrl, 'redirect-limit', `more than ${this.limits.maxRedirects} redirects`);
          return;
        }
        if (next.href.length > this.limits.maxUrlLength) {
          this.count('url-too-long');
          return;
        }
        if (!this.passesFilters(next.href) || !(this.robots?.isAllowed(next.href) ?? true)) {
          this.count('redirect-out-of-scope');
          return;
        }
        if (this.seen.has(next.href) && next.href !== startUrl) {
          this.count('redirect-followed'); // the target is (or was) crawled on its own
          return;
        }
        this.seen.add(next.href);
        this.count('redirect-followed');
        url = next;
        continue;
      }
      this.stats.pagesFetched++;
      await this.handleResponse(startUrl, url, depth, r, fetchedAt, known, ex);
      return;
    }
  }

  private async handleResponse(
    startUrl: string,
    url: URL,
    depth: number,
    r: FetchResult & { ok: true },
    fetchedAt: number,
    known: KnownPage | undefined,
    ex: Exchange | undefined,
  ): Promise<void> {
    const s = r.status;
    if (s === 304) {
      this.stats.pagesUnchanged++;
      this.stats.pagesNotModified++;
      this.count('not-modified');
      this.addValidator({
        url: startUrl,
        depth,
        digest: known?.digest ?? 0,
        ...pickValidators(r.headers, known),
        ...earlierCapture(known),
      });
      if (ex) await this.archiveRevisit(ex, 'server-not-modified', { uri: url.href, ...refersToCapture(known) });
      return;
    }
    if (s < 200 || s >= 300) {
      this.stats.pagesFailed++;
      this.fail(url.href, s >= 500 ? 'http-5xx' : s >= 400 ? 'http-4xx' : 'http-other', `status ${s}`);
      if (ex && this.opts.archiveErrors) await this.archiveResponse(ex);
      return;
    }
    if (r.skipped) {
      if (r.skipped === 'not-html') this.count('not-html');
      else {
        this.stats.pagesFailed++;
        this.fail(url.href, r.skipped, `content-length ${r.headers['content-length'] ?? '?'}, encoding ${r.headers['content-encoding'] ?? 'identity'}`);
      }
      return;
    }
    const body = r.body ?? Buffer.alloc(0);
    // The payload digest (of the body as transferred: what WARC files and other
    // archives compare) and the 32-bit digest of the decoded body (Pageseen):
    // one SHA-1 when the body was not content-encoded.
    const raw = r.raw ?? body;
    const full = sha1(raw);
    const payloadDigest = sha1Label(full);
    const digest = raw === body ? full.readUInt32BE(0) : sha1_32(body);
    const validators = pickValidators(r.headers, undefined);
    // Unchanged at this URL: the payload digest recorded for it, or (validators
    // from before payload digests were recorded) the same decoded body.
    const identicalPayload = known?.payloadDigest !== undefined && known.payloadDigest === payloadDigest;
    if (identicalPayload || (known?.payloadDigest === undefined && known?.digest === digest)) {
      // Like a 304: its links are the ones found last time, so it is neither parsed nor uploaded.
      this.stats.pagesUnchanged++;
      this.count('unchanged');
      if (identicalPayload) {
        this.addValidator({ url: startUrl, depth, digest, ...validators, payloadDigest, ...earlierCapture(known) });
        if (ex) await this.archiveRevisit(ex, 'identical-payload-digest', { uri: url.href, ...refersToCapture(known) }, payloadDigest);
      } else {
        // No payload digest to show it is the same capture: the archive gets the response.
        this.addValidator({ url: startUrl, depth, digest, ...validators, payloadDigest, ...(ex ? { capturedAt: ex.date } : {}) });
        if (ex) await this.archiveResponse(ex, payloadDigest);
      }
      return;
    }
    // A new capture of this URL (changed, or text already known from elsewhere: Pageseen).
    if (ex) await this.archiveResponse(ex, payloadDigest);
    const capture = { payloadDigest, ...(ex ? { capturedAt: ex.date } : {}) };
    const decoded = decodeBody(body, r.headers['content-type']);
    if (decoded.fallback) this.count('charset-fallback');
    const page = parseHtml(decoded.text, url, {
      maxLinks: this.limits.maxLinksPerPage,
      maxText: this.limits.maxTextChars,
      userAgentToken: this.opts.robotsToken ?? ROBOTS_TOKEN,
    });
    if (page.nofollow) this.count('nofollow', page.links.length);
    else {
      for (const l of page.links) {
        if (l.nofollow) {
          this.count('nofollow');
          continue;
        }
        this.consider(l.url, depth + 1, false, l.parsed);
      }
    }
    const unchanged = this.pageSeen.has(digest);
    this.addValidator({ url: startUrl, depth, digest, ...validators, ...capture });
    if (unchanged) {
      this.stats.pagesUnchanged++;
      this.count('unchanged');
      return;
    }
    this.stats.pagesChanged++;
    this.count('changed');
    if (page.noindex) this.count('noindex');
    const rec: PageRecord = {
      url: startUrl,
      status: s,
      depth,
      fetchedAt,
      contentType: (r.headers['content-type'] ?? '').slice(0, 256),
      bytes: body.length,
      digest,
      ...validators,
      text: page.noindex ? '' : page.text,
    };
    if (url.href !== startUrl) rec.finalUrl = url.href;
    if (page.title) rec.title = page.title;
    if (page.noindex) rec.noindex = true;
    this.spool.addPage(rec);
  }

  private addValidator(v: ValidatorRecord): void {
    this.spool.addValidator(v);
  }

  /** The exchanges captured since the last call (one per request). */
  private takeCaptured(): Exchange[] {
    if (this.captured.length === 0) return this.captured;
    const c = this.captured;
    this.captured = [];
    return c;
  }

  private async archiveResponse(ex: Exchange, payloadDigest?: string): Promise<void> {
    if (payloadDigest !== undefined) ex.payloadDigest = payloadDigest;
    await this.opts.archive?.archive({ kind: 'response', exchange: ex });
  }

  private async archiveRevisit(ex: Exchange, profile: RevisitProfile, refersTo: RefersTo, payloadDigest?: string): Promise<void> {
    if (payloadDigest !== undefined) ex.payloadDigest = payloadDigest;
    // A revisit holds the response head only.
    await this.opts.archive?.archive({ kind: 'revisit', exchange: { ...ex, body: new Uint8Array(0) }, profile, refersTo });
  }

  private cleanupSpool(): void {
    this.spool.close();
  }

  private base(status: TaskStatus, reason: string | undefined, part: number, final: boolean): Omit<TaskResult, 'pages' | 'validators' | 'newDigests'> {
    return {
      taskId: this.task.id,
      channel: this.task.scope,
      part,
      final,
      status,
      ...(reason ? { reason } : {}),
      startedAt: this.startedAt,
      finishedAt: this.now(),
      interSiteUrls: final ? [...this.interSite] : [],
      outcomes: final ? this.outcomes : {},
      errors: final ? this.errors : [],
      stats: this.stats,
    };
  }

  /** The uploader: reads the spool back and uploads it in parts; the last part carries the statistics. */
  private async upload(status: TaskStatus, reason: string | undefined): Promise<number> {
    let part = 0;
    let pages: PageRecord[] = [];
    let validators: ValidatorRecord[] = [];
    let textChars = 0;
    const maxPages = this.limits.pagesPerPart;
    const send = async (final: boolean) => {
      const p = pages;
      const v = validators;
      pages = [];
      validators = [];
      textChars = 0;
      await this.sink.upload({ ...this.base(status, reason, part++, final), pages: p, validators: v, newDigests: p.map((x) => x.digest) });
    };
    try {
      for (const r of this.spool.read()) {
        if (r.kind === 'p') {
          pages.push(r.page);
          textChars += r.page.text.length;
        } else validators.push(r.validator);
        if (pages.length >= maxPages || textChars > 2_000_000 || validators.length >= 20 * maxPages) await send(false);
      }
      await send(true);
    } finally {
      this.cleanupSpool();
    }
    return part;
  }
}

/** The capture an unchanged page's validators carry forward: the payload digest and date of its last response record. */
function earlierCapture(known: KnownPage | undefined): { payloadDigest?: string; capturedAt?: number } {
  const out: { payloadDigest?: string; capturedAt?: number } = {};
  if (known?.payloadDigest !== undefined) out.payloadDigest = known.payloadDigest;
  if (known?.capturedAt !== undefined) out.capturedAt = known.capturedAt;
  return out;
}

/** WARC-Refers-To-Date and the earlier payload digest, as far as they are known. */
function refersToCapture(known: KnownPage | undefined): { date?: number; payloadDigest?: string } {
  const out: { date?: number; payloadDigest?: string } = {};
  if (known?.capturedAt !== undefined) out.date = known.capturedAt;
  if (known?.payloadDigest !== undefined) out.payloadDigest = known.payloadDigest;
  return out;
}

function pickValidators(h: Record<string, string>, known: KnownPage | undefined): { etag?: string; lastModified?: string } {
  const out: { etag?: string; lastModified?: string } = {};
  const etag = h['etag'] ?? known?.etag;
  const lm = h['last-modified'] ?? known?.lastModified;
  // Oversized validators would make the next task invalid (TASK schema caps): drop them.
  if (etag && etag.length <= 512) out.etag = etag;
  if (lm && lm.length <= 128) out.lastModified = lm;
  return out;
}
