// A successful recrawl of a channel, recorded with its final upload: the
// channel's history, the change-rate estimate and its group (estimator.ts), the
// scheduler's update (its record, its due-index entry, the window aggregates,
// the channels parked behind its host), and the known pages the next task
// carries. Returns the batch operations; the caller holds the commit lock, has
// checked that the task is the one in flight, and writes them.
import type { BatchOp } from '../data/repositories.js';
import type { Channel, RecrawlHistoryRecord } from '../domain/channel.js';
import { HISTORY_KEEP } from '../domain/channel.js';
import { changeIntervalOf, chooseGroup, estimateChangeRate, type GroupingOptions, type VisitObservation } from '../domain/estimator.js';
import type { KnownEntry, PageLatest, TaskRecord } from '../domain/records.js';
import { SUCCESS_STATUSES, type UploadedResult } from '../domain/result-schema.js';
import { DATA_KNOWN, MINUTE } from '../domain/scheduler.js';
import type { ServiceCore } from './core.js';
import { endOps, statsOp } from './schedules.js';

export interface UpdateInput {
  ch: Channel;
  t: TaskRecord;
  r: UploadedResult;
  from: string;
  now: number;
  /** The channel's history before this visit. */
  history: RecrawlHistoryRecord[];
  /** The channel's other stored pages (empty after a complete crawl in one part). */
  stored: { url: string; latest: PageLatest }[];
  /** The pages of this part. */
  latest: Map<string, PageLatest>;
}

export async function recordUpdate(core: ServiceCore, grouping: GroupingOptions, u: UpdateInput): Promise<BatchOp[]> {
  const { repos, sched } = core;
  const { ch, t, r, now } = u;
  const prevOk = [...u.history].reverse().find((h) => SUCCESS_STATUSES.has(h.status));
  const observation: VisitObservation | null =
    prevOk !== undefined && now > prevOk.finishedAt ? { interval: (now - prevOk.finishedAt) / MINUTE, revisited: t.revisited, changed: t.changed } : null;
  const history = [
    ...u.history,
    {
      taskId: t.id,
      issuedAt: t.issuedAt,
      finishedAt: now,
      status: r.status,
      crawler: u.from,
      pagesFetched: r.stats.pagesFetched,
      pagesChanged: r.stats.pagesChanged,
      revisited: t.revisited,
      revisitedChanged: t.changed,
      newPages: t.newPages,
      downloadMs: r.stats.downloadMs,
      observation,
    },
  ].slice(-HISTORY_KEEP);
  const obs = history.flatMap((h) => (h.observation !== null && h.observation.revisited > 0 ? [h.observation] : []));
  const initial = sched.state.groups.map((g) => g.initialInterval);
  const rate = estimateChangeRate(obs);
  const ci = changeIntervalOf(rate, ch.changeInterval, initial, grouping);
  const group = ch.pinnedGroup ? ch.group : chooseGroup(ch.group, ci, obs.length, initial, grouping);
  const fl = core.inflight.end(ch.id)!;
  const rec = await repos.channels.schedule(ch.id);
  let after = rec !== undefined ? sched.succeeded(rec, fl, now, r.stats.downloadMs) : undefined;
  if (after !== undefined) {
    after = sched.withChangeInterval(after, ci);
    after = sched.withData(after, DATA_KNOWN) ?? after; // the known pages are written below, with this record
    if (group !== ch.group) after = sched.regroup(after, group);
  }
  if (group !== ch.group) {
    core.counters.groupMoves++;
    core.log.info({ channel: ch.id, from: ch.group, to: group, changeIntervalMin: ci }, 'channel moved between priority groups');
  }
  const next: Channel = { ...ch, changeRate: rate, changeInterval: ci, group, updatedAt: now };
  if (t.livePages > 0) next.expectedPages = t.livePages;
  core.counters.tasksSucceeded++;
  return [repos.channels.putOp(next), repos.channels.historyOp(ch.id, history), ...(await endOps(core, ch.id, after, fl)), statsOp(core), repos.channels.knownOp(ch.id, knownPages(u))];
}

/** Known pages for the next task: every stored page; after a complete crawl only those seen in it. */
function knownPages(u: UpdateInput): KnownEntry[] {
  const all = new Map<string, PageLatest>(u.stored.map((s) => [s.url, s.latest]));
  for (const [url, v] of u.latest) all.set(url, v);
  const known: KnownEntry[] = [];
  for (const [url, v] of all) {
    if (u.r.status === 'completed' && v.lastTask !== u.t.id) continue;
    // A page a distrusted volunteer supplied is left out: the next crawl brings its text back.
    if (v.unverified === true) continue;
    const e: KnownEntry = { url, digest: v.digest, depth: v.depth };
    if (v.etag !== undefined) e.etag = v.etag;
    if (v.lastModified !== undefined) e.lastModified = v.lastModified;
    if (v.payloadDigest !== undefined && v.capturedAt !== undefined) {
      e.payloadDigest = v.payloadDigest;
      e.capturedAt = v.capturedAt;
    }
    known.push(e);
  }
  return known;
}
