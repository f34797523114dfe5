// The storage module (paper §2): receives task results, stores each changed
// page's text and metadata as a new version, keeps digests and validators for
// the next task of the channel, feeds the change-rate estimator and the recrawl
// strategy, turns inter-site URLs into seeds of known channels or candidate
// channels, records crawler-reported host RTTs (placing a host with src/coords
// once ≥ 3 landmarks reported), and exports pages to WARC files.
//
// An upload part is applied at most once: its number is added to the task
// record in the same batch as the part's pages, so a repeated upload (a crawler retry
// after a lost acknowledgement) is acknowledged without being applied again.
import { sha1_32 } from '../crawler/hash.js';
import type { PageRecord } from '../crawler/task.js';
import { placeHost, type Landmark } from '../coords/index.js';
import { fromWireCoord, toWireCoord } from '../dht/peers.js';
import { checkHandoverChain, type Handover, type WireCoord } from '../dht/signing.js';
import { createRng, deriveSeed } from '../rng.js';
import { changeIntervalOf, chooseGroup, estimateChangeRate, type VisitObservation } from './estimator.js';
import { channelOfTask, type KnownEntry, type Manager, type TaskRecord } from './manager.js';
import { HISTORY_KEEP, type Channel, type RecrawlHistoryRecord } from './model.js';
import { resultSchema, SUCCESS_STATUSES, type UploadedResult } from './result-schema.js';
import { DATA_INTER_DIGESTS, DATA_INTER_SEEDS, DATA_KNOWN, MINUTE } from './scheduler.js';
import { K, type BatchOp } from './store.js';
import type { WarcExporter, WarcPage } from './warc.js';

/** Pages the WARC exporter may lag behind before uploads wait for it. */
export const WARC_MAX_BACKLOG = 2000;

export class UploadRefused extends Error {
  override name = 'UploadRefused';
}

/** What arrives over the upload protocol (src/dht/upload.ts's uploadSchema, result unparsed). */
export interface UploadIn {
  orderId: string;
  crawler: string;
  host: string;
  hostRttMs: number | null;
  crawlerCoord?: WireCoord;
  /** Signed hand-overs passing the task to the sender (migration). */
  handover?: Handover[];
  result: unknown;
}

/** The latest validators and version of a stored page (pl!<channel>!<url>). */
export interface PageLatest {
  digest: number;
  depth: number;
  etag?: string;
  lastModified?: string;
  version: number;
  fetchedAt?: number;
  title?: string;
  bytes?: number;
  lastSeen: number;
  lastTask: string;
}

/** One stored version of a page (pv!<channel>!<url>!<version>). */
export interface PageVersion extends PageRecord {
  version: number;
  taskId: string;
  crawler: string;
  storedAt: number;
}

export interface Candidate {
  origin: string;
  status: 'pending' | 'accepted' | 'rejected';
  firstSeen: number;
  lastSeen: number;
  count: number;
  urls: string[];
  from: string[];
  channel?: string;
}

interface HostReports {
  reports: { crawler: string; coord: WireCoord; rttMs: number; at: number }[];
}

export const STORAGE_LIMITS = {
  interSeedsPerChannel: 1000,
  interDigestsPerChannel: 100_000,
  originsPerUpload: 200,
  interUrlsPerUpload: 2000,
  hostReports: 16,
  candidateSamples: 10,
} as const;

function inScope(url: string, ch: Channel): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return u.origin === ch.origin && ch.pathPrefixes.some((p) => u.pathname.startsWith(p));
}

export class Storage {
  constructor(
    readonly m: Manager,
    readonly warc: WarcExporter | null = null,
  ) {}

  /** Validates and applies one upload part from peer `from`. Throws UploadRefused
   * (the crawler is told why) when it cannot be accepted. */
  async ingest(msg: UploadIn, from: string): Promise<'applied' | 'duplicate'> {
    const m = this.m;
    const parsed = resultSchema.safeParse(msg.result);
    if (!parsed.success) {
      m.counters.uploadsRefused++;
      const i = parsed.error.issues[0];
      throw new UploadRefused(`malformed result: ${i?.path.join('.') ?? ''} ${i?.message ?? ''}`.trim());
    }
    const r = parsed.data;
    if (msg.orderId !== r.taskId) {
      m.counters.uploadsRefused++;
      throw new UploadRefused('orderId and result.taskId differ');
    }
    // Serialise per channel (parts of one task, and operator edits of the channel);
    // the reads run outside the global lock, which is held only to commit. A task
    // id names its channel, so the task record is read once, under the lock (an
    // unknown task is refused there).
    const res = await m.channelLocks.run(channelOfTask(r.taskId), () => this.apply(msg, r, from));
    if (this.warc !== null && res.warc.length > 0) {
      // The WARC file is an export (the batch above is the source of truth): the
      // acknowledgement waits for it only when the exporter falls behind.
      const job = this.warc.append(res.warc).catch((err: unknown) => m.log.error({ err: String(err) }, 'WARC export failed'));
      if (this.warc.backlog > WARC_MAX_BACKLOG) await job;
    }
    return res.outcome;
  }

  private async apply(msg: UploadIn, r: UploadedResult, from: string): Promise<{ outcome: 'applied' | 'duplicate'; warc: WarcPage[] }> {
    const m = this.m;
    const store = m.store;
    const now = m.clock();
    const refuse = (why: string): never => {
      m.counters.uploadsRefused++;
      throw new UploadRefused(why);
    };
    const t0 = (await m.activeTask(r.taskId)) ?? (await store.get<TaskRecord>(K.task(r.taskId)));
    if (t0 === undefined) return refuse(`unknown task ${r.taskId}`);
    if (t0.applied?.includes(r.part) === true) {
      m.counters.uploadsDuplicate++;
      return { outcome: 'duplicate', warc: [] };
    }
    // Only the holder uploads. A crawler the task was migrated to proves the hand-over
    // with the chain of links signed by each holder, starting at the one on record.
    let handedOver = false;
    if (t0.holder !== undefined && t0.holder !== 'unknown' && t0.holder !== from) {
      const why = msg.handover === undefined ? undefined : await checkHandoverChain(msg.handover, t0.id, t0.holder, from);
      if (msg.handover === undefined || why !== undefined) {
        return refuse(`upload from a peer that does not hold this task${why !== undefined ? ` (${why})` : ''}`);
      }
      handedOver = true;
    }
    if (t0.state === 'done') {
      m.counters.uploadsDuplicate++;
      return { outcome: 'duplicate', warc: [] };
    }
    const ch = await store.get<Channel>(K.channel(t0.channel));
    if (ch === undefined) return refuse(`channel ${t0.channel} no longer exists`);
    if (r.channel.origin !== ch.origin) return refuse('result is for another channel');

    // Live pages this part: validators of every page fetched (changed or not) plus changed pages.
    const live = new Map<string, { digest: number; depth: number; etag?: string; lastModified?: string }>();
    for (const v of r.validators) live.set(v.url, v);
    const pageOf = new Map<string, UploadedResult['pages'][number]>();
    for (const p of r.pages) {
      pageOf.set(p.url, p);
      if (!live.has(p.url)) live.set(p.url, { digest: p.digest, depth: p.depth, ...(p.etag !== undefined ? { etag: p.etag } : {}), ...(p.lastModified !== undefined ? { lastModified: p.lastModified } : {}) });
    }
    for (const url of live.keys()) if (!inScope(url, ch)) return refuse(`page ${url.slice(0, 200)} is outside the channel`);
    const urls = [...live.keys()];
    const prevs = await store.getMany<PageLatest>(urls.map((u) => K.pageLatest(ch.id, u)));
    const ops: BatchOp[] = [];
    const warc: WarcPage[] = [];
    const latest = new Map<string, PageLatest>();
    const d = { revisited: 0, changed: 0, newPages: 0, stored: 0, bytes: 0 };
    urls.forEach((url, i) => {
      const v = live.get(url)!;
      const prev = prevs[i];
      if (prev !== undefined) {
        d.revisited++;
        if (prev.digest !== v.digest) d.changed++;
      } else {
        d.newPages++;
      }
      const next: PageLatest = { ...(prev ?? { version: 0 }), digest: v.digest, depth: v.depth, lastSeen: now, lastTask: t0.id };
      if (v.etag !== undefined) next.etag = v.etag;
      else delete next.etag;
      if (v.lastModified !== undefined) next.lastModified = v.lastModified;
      else delete next.lastModified;
      const p = pageOf.get(url);
      if (p !== undefined && (prev === undefined || prev.version === 0 || prev.digest !== p.digest)) {
        next.version = (prev?.version ?? 0) + 1;
        next.fetchedAt = p.fetchedAt;
        next.bytes = p.bytes;
        if (p.title !== undefined) next.title = p.title;
        const { text: pageText, ...pageMeta } = p;
        const pv: Omit<PageVersion, 'text'> = { ...pageMeta, version: next.version, taskId: t0.id, crawler: from, storedAt: now };
        ops.push({ type: 'put', key: K.pageVersion(ch.id, url, next.version), value: pv });
        ops.push({ type: 'put', key: K.pageText(ch.id, url, next.version), value: pageText, valueEncoding: 'utf8' });
        d.stored++;
        d.bytes += p.text.length;
        warc.push({ url, fetchedAt: p.fetchedAt, text: pageText, meta: { ...pv, channel: ch.id } });
      }
      latest.set(url, next);
      ops.push({ type: 'put', key: K.pageLatest(ch.id, url), value: next });
    });
    const success = r.final && SUCCESS_STATUSES.has(r.status);
    // Reads the final part needs, outside the global lock (this channel is locked).
    const hadUpdate = m.sched.has(ch.id) && m.sched.channel(ch.id).lastUpdate !== null;
    const history = success && hadUpdate ? ((await store.get<RecrawlHistoryRecord[]>(K.history(ch.id))) ?? []) : [];
    // The channel's other stored pages matter to the known list (finish) unless the
    // crawl is complete and this is its only part: then the known pages are exactly
    // the ones this part saw, and the scan of the channel's pl! range is skipped.
    const onlyPart = (t0.applied ?? []).length === 0;
    const stored = success && !(r.status === 'completed' && onlyPart) ? await store.range<PageLatest>(K.pageLatestPrefix(ch.id)) : [];

    return m.lock.run(async () => {
      // Whether the task is still in flight (an overdue check may have failed it meanwhile;
      // it takes this channel's lock, so t0 is otherwise current).
      const t = t0;
      const isActive = m.isActive(t.id);
      if (!isActive && t.state !== 'failed' && t.state !== 'done') t.state = 'failed';
      if (t.applied?.includes(r.part) === true) {
        m.counters.uploadsDuplicate++;
        return { outcome: 'duplicate' as const, warc: [] };
      }
      // The applied part numbers live in the task record, written in this same batch:
      // a repeated upload of a part is acknowledged without being applied again.
      t.applied = [...(t.applied ?? []), r.part];
      if (handedOver) m.log.info({ task: t.id, from: t.holder, to: from }, 'task handed over');
      if (t.holder === undefined || t.holder === 'unknown' || handedOver) t.holder = from;
      t.revisited += d.revisited;
      t.changed += d.changed;
      t.newPages += d.newPages;
      t.parts++;
      t.pagesStored += d.stored;
      t.livePages += live.size;
      m.counters.uploadsApplied++;
      m.counters.pagesStored += d.stored;
      m.counters.pageBytes += d.bytes;
      if (!r.final) {
        ops.push({ type: 'put', key: isActive ? K.active(t.id) : K.task(t.id), value: t });
        await store.batch(ops);
        return { outcome: 'applied' as const, warc };
      }
      // Final part: inter-site URLs, host RTT, and the task's outcome.
      await this.interSite(ch, r.interSiteUrls, now, ops);
      await this.hostRtt(ch, msg, from, now, ops);
      if (!success) {
        if (isActive) await m.failLocked(t, `crawler reported ${r.status}${r.reason !== undefined ? `: ${r.reason}` : ''}`, ops);
        else {
          ops.push({ type: 'put', key: K.task(t.id), value: t });
          await store.batch(ops);
        }
        return { outcome: 'applied' as const, warc };
      }
      const inFlight = isActive && m.sched.has(ch.id) && m.sched.inFlight(ch.id) === t.id;
      t.state = 'done';
      t.finishedAt = now;
      ops.push({ type: 'put', key: K.task(t.id), value: t }, { type: 'del', key: K.active(t.id) });
      if (inFlight) this.finish(ch, t, r, from, now, history, stored, latest, ops);
      await store.batch(ops);
      return { outcome: 'applied' as const, warc };
    });
  }

  /** A successful recrawl: history, estimator, groups, scheduler, known pages. */
  private finish(
    ch: Channel,
    t: TaskRecord,
    r: UploadedResult,
    from: string,
    now: number,
    history: RecrawlHistoryRecord[],
    stored: { key: string; value: PageLatest }[],
    latest: Map<string, PageLatest>,
    ops: BatchOp[],
  ): void {
    const m = this.m;
    m.sched.markData(ch.id, DATA_KNOWN); // kn! is written below, with this record
    const prevOk = [...history].reverse().find((h) => SUCCESS_STATUSES.has(h.status));
    const observation: VisitObservation | null =
      prevOk !== undefined && now > prevOk.finishedAt ? { interval: (now - prevOk.finishedAt) / MINUTE, revisited: t.revisited, changed: t.changed } : null;
    history.push({
      taskId: t.id,
      issuedAt: t.issuedAt,
      finishedAt: now,
      status: r.status,
      crawler: from,
      pagesFetched: r.stats.pagesFetched,
      pagesChanged: r.stats.pagesChanged,
      revisited: t.revisited,
      revisitedChanged: t.changed,
      newPages: t.newPages,
      downloadMs: r.stats.downloadMs,
      observation,
    });
    if (history.length > HISTORY_KEEP) history.splice(0, history.length - HISTORY_KEEP);
    const obs = history.flatMap((h) => (h.observation !== null && h.observation.revisited > 0 ? [h.observation] : []));
    const initial = m.sched.state.groups.map((g) => g.initialInterval);
    const rate = estimateChangeRate(obs);
    const ci = changeIntervalOf(rate, ch.changeInterval, initial, m.grouping);
    const group = ch.pinnedGroup ? ch.group : chooseGroup(ch.group, ci, obs.length, initial, m.grouping);
    m.sched.markSuccess(ch.id, t.id, now, r.stats.downloadMs);
    m.sched.setChangeInterval(ch.id, ci);
    if (group !== ch.group) {
      m.sched.setGroup(ch.id, group);
      m.counters.groupMoves++;
      m.log.info({ channel: ch.id, from: ch.group, to: group, changeIntervalMin: ci }, 'channel moved between priority groups');
    }
    const next: Channel = { ...ch, changeRate: rate, changeInterval: ci, group, updatedAt: now };
    if (t.livePages > 0) next.expectedPages = t.livePages;
    ops.push({ type: 'put', key: K.channel(ch.id), value: next });
    ops.push({ type: 'put', key: K.history(ch.id), value: history });
    ops.push({ type: 'put', key: K.sched(ch.id), value: m.sched.record(ch.id) });
    // Known pages for the next task: every stored page; after a complete crawl only those seen in it.
    const prefix = K.pageLatestPrefix(ch.id);
    const all = new Map<string, PageLatest>(stored.map((row) => [row.key.slice(prefix.length), row.value]));
    for (const [u, v] of latest) all.set(u, v);
    const known: KnownEntry[] = [];
    for (const [url, v] of all) {
      if (r.status === 'completed' && v.lastTask !== t.id) continue;
      const e: KnownEntry = { url, digest: v.digest, depth: v.depth };
      if (v.etag !== undefined) e.etag = v.etag;
      if (v.lastModified !== undefined) e.lastModified = v.lastModified;
      known.push(e);
    }
    ops.push({ type: 'put', key: K.known(ch.id), value: known });
    m.counters.tasksSucceeded++;
  }

  /** Inter-site URLs → seeds of the channels that contain them, or candidate channels. */
  private async interSite(src: Channel, urlsIn: string[], now: number, ops: BatchOp[]): Promise<void> {
    const m = this.m;
    const urls = [...new Set(urlsIn)].slice(0, STORAGE_LIMITS.interUrlsPerUpload);
    if (urls.length === 0) return;
    const byOrigin = new Map<string, URL[]>();
    for (const s of urls) {
      let u: URL;
      try {
        u = new URL(s);
      } catch {
        continue;
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
      if (u.username || u.password) continue;
      u.hash = '';
      const list = byOrigin.get(u.origin);
      if (list !== undefined) list.push(u);
      else if (byOrigin.size < STORAGE_LIMITS.originsPerUpload) byOrigin.set(u.origin, [u]);
    }
    const addSeeds = new Map<string, string[]>();
    const cands = new Map<string, URL[]>();
    for (const [origin, list] of byOrigin) {
      const rows = await m.store.range<string[]>(K.originPrefix(origin));
      for (const u of list) {
        const hit = rows.find((row) => row.value.some((p) => u.pathname.startsWith(p)));
        if (hit !== undefined) {
          const id = hit.key.slice(K.originPrefix(origin).length);
          if (id === src.id) continue;
          const a = addSeeds.get(id) ?? [];
          a.push(u.href);
          addSeeds.set(id, a);
        } else {
          const c = cands.get(origin) ?? [];
          c.push(u);
          cands.set(origin, c);
        }
      }
    }
    const seedIds = [...addSeeds.keys()];
    const olds = await m.store.getMany<string[]>(seedIds.map((id) => K.interSeeds(id)));
    seedIds.forEach((id, i) => {
      const merged = [...new Set([...(olds[i] ?? []), ...addSeeds.get(id)!])];
      ops.push({ type: 'put', key: K.interSeeds(id), value: merged.slice(-STORAGE_LIMITS.interSeedsPerChannel) });
      if (m.sched.has(id) && m.sched.markData(id, DATA_INTER_SEEDS)) ops.push({ type: 'put', key: K.sched(id), value: m.sched.record(id) });
    });
    const origins = [...cands.keys()];
    const prevC = await m.store.getMany<Candidate>(origins.map((o) => K.candidate(o)));
    origins.forEach((origin, i) => {
      const list = cands.get(origin)!;
      const c: Candidate = prevC[i] ?? { origin, status: 'pending', firstSeen: now, lastSeen: now, count: 0, urls: [], from: [] };
      c.lastSeen = now;
      c.count += list.length;
      c.urls = [...new Set([...c.urls, ...list.map((u) => u.href)])].slice(0, STORAGE_LIMITS.candidateSamples);
      if (!c.from.includes(src.id)) c.from = [...c.from, src.id].slice(-STORAGE_LIMITS.candidateSamples);
      ops.push({ type: 'put', key: K.candidate(origin), value: c });
    });
    // The source channel's crawler need not report these again.
    const xd = (await m.store.get<number[]>(K.interDigests(src.id))) ?? [];
    const set = new Set(xd);
    for (const s of urls) set.add(sha1_32(s));
    const arr = [...set];
    ops.push({ type: 'put', key: K.interDigests(src.id), value: arr.slice(-STORAGE_LIMITS.interDigestsPerChannel) });
    if (m.sched.has(src.id) && m.sched.markData(src.id, DATA_INTER_DIGESTS)) ops.push({ type: 'put', key: K.sched(src.id), value: m.sched.record(src.id) });
  }

  /** Keeps the crawlers' RTT reports to the host; places it once ≥ 3 landmarks reported. */
  private async hostRtt(ch: Channel, msg: UploadIn, from: string, now: number, ops: BatchOp[]): Promise<void> {
    if (msg.hostRttMs === null || !(msg.hostRttMs > 0) || msg.crawlerCoord === undefined) return;
    const host = ch.host;
    const hr = (await this.m.store.get<HostReports>(K.hostRtt(host))) ?? { reports: [] };
    hr.reports = hr.reports.filter((x) => x.crawler !== from);
    hr.reports.push({ crawler: from, coord: msg.crawlerCoord, rttMs: msg.hostRttMs, at: now });
    if (hr.reports.length > STORAGE_LIMITS.hostReports) hr.reports.splice(0, hr.reports.length - STORAGE_LIMITS.hostReports);
    ops.push({ type: 'put', key: K.hostRtt(host), value: hr });
    if (hr.reports.length >= 3) {
      const dims = hr.reports[hr.reports.length - 1]!.coord.vec.length;
      const landmarks: Landmark[] = hr.reports.map((x) => ({ coord: fromWireCoord(x.coord), rttMs: x.rttMs }));
      try {
        const c = placeHost(landmarks, { dimensions: dims }, createRng(deriveSeed(1, host)));
        ops.push({ type: 'put', key: K.hostCoord(host), value: toWireCoord(c) });
      } catch (err) {
        this.m.log.debug({ host, err: String(err) }, 'host placement failed');
      }
    }
  }

  /** The latest stored content of a channel's pages. */
  async latest(channelId: string, opts: { limit?: number; after?: string } = {}): Promise<(PageVersion & { url: string })[]> {
    await this.m.getChannel(channelId);
    const prefix = K.pageLatestPrefix(channelId);
    const rows = await this.m.store.range<PageLatest>(prefix, { limit: opts.limit ?? 50, ...(opts.after !== undefined ? { after: prefix + opts.after } : {}) });
    const withVersion = rows.filter((r) => r.value.version > 0);
    const vs = await this.m.store.getMany<PageVersion>(withVersion.map((r) => K.pageVersion(channelId, r.key.slice(prefix.length), r.value.version)));
    return this.withText(channelId, vs.filter((v): v is PageVersion => v !== undefined));
  }

  private async withText(channelId: string, vs: PageVersion[]): Promise<PageVersion[]> {
    const texts = await this.m.store.getManyText(vs.map((v) => K.pageText(channelId, v.url, v.version)));
    return vs.map((v, i) => ({ ...v, text: v.text ?? texts[i] ?? '' }));
  }

  /** All stored versions of one page, oldest first. */
  async versions(channelId: string, url: string): Promise<PageVersion[]> {
    const r = K.pageVersionRange(channelId, url);
    const rows = await this.m.store.between<PageVersion>(r, r.gte.length - 1);
    return this.withText(channelId, rows.map((r) => r.value));
  }

  async candidates(status?: Candidate['status']): Promise<Candidate[]> {
    const rows = await this.m.store.range<Candidate>('cd!', { limit: 10_000 });
    return rows.map((r) => r.value).filter((c) => status === undefined || c.status === status);
  }

  /** Accepts a candidate: it becomes a host channel (extra fields allowed), seeded with its sample URLs. */
  async acceptCandidate(origin: string, extra: Record<string, unknown> = {}): Promise<Channel> {
    const c = await this.m.store.get<Candidate>(K.candidate(origin));
    if (c === undefined) throw new CandidateNotFound(`no candidate ${origin}`);
    if (c.status === 'accepted') throw new CandidateConflict(`candidate ${origin} was already accepted as ${c.channel ?? '?'}`);
    const ch = await this.m.addChannel({ origin, seeds: [origin + '/', ...c.urls], ...extra });
    await this.m.lock.run(() => this.m.store.batch([{ type: 'put', key: K.candidate(origin), value: { ...c, status: 'accepted', channel: ch.id } }]));
    return ch;
  }

  async rejectCandidate(origin: string): Promise<Candidate> {
    return this.m.lock.run(async () => {
      const c = await this.m.store.get<Candidate>(K.candidate(origin));
      if (c === undefined) throw new CandidateNotFound(`no candidate ${origin}`);
      const next: Candidate = { ...c, status: 'rejected' };
      await this.m.store.batch([{ type: 'put', key: K.candidate(origin), value: next }]);
      return next;
    });
  }
}

export class CandidateNotFound extends Error {
  override name = 'NotFoundError';
}
export class CandidateConflict extends Error {
  override name = 'ConflictError';
}
