// The storage side of an upload (paper §2): validates each part a crawler
// uploads, stores each changed page as a new version with its metadata, keeps
// validators for the next task, and on the final part records the task's
// outcome — on success the recrawl update (ingest-update.ts), the inter-site
// URLs (ingest-links.ts) and the host's RTT reports (ingest-hosts.ts). Pages
// are exported to WARC files after the batch that stores them.
//
// A part is applied at most once: its number is added to the task record in the
// same batch as its pages, so a repeated upload (a crawler retry after a lost
// acknowledgement) is acknowledged without being applied again. Every refusal
// goes through `refuse`, with the sending peer: the one place a volunteer's
// misbehaviour is seen.
import { checkHandoverChain, type Handover, type WireCoord } from '../../dht/signing.js';
import { UploadRefused } from '../errors.js';
import type { BatchOp } from '../data/repositories.js';
import type { GroupingOptions } from '../domain/estimator.js';
import { diffPart, inScope, livePages } from '../domain/page-diff.js';
import type { Channel } from '../domain/channel.js';
import type { PageLatest, TaskRecord } from '../domain/records.js';
import { resultSchema, SUCCESS_STATUSES, type UploadedResult } from '../domain/result-schema.js';
import { channelOfTask } from '../domain/task-builder.js';
import type { WarcPage } from '../warc.js';
import type { ServiceCore } from './core.js';
import { hostRttOps } from './ingest-hosts.js';
import { interSiteOps } from './ingest-links.js';
import { recordUpdate } from './ingest-update.js';
import { commitScheduled, snapshot } from './schedules.js';
import type { TaskService } from './tasks.js';

/** Pages the WARC exporter may lag behind before uploads wait for it. The pages in its
 * queue are held in memory (≈ 20 KB of text each, copied into the messages to its
 * thread): 500 bound that at ≈ 10 MB where 2 000 let it reach ≈ 40 MB. */
export const WARC_MAX_BACKLOG = 500;

/** Where stored pages are exported (warc.ts's WarcExporter). */
export interface WarcSink {
  append(pages: WarcPage[]): Promise<void>;
  readonly backlog: number;
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

type Outcome = { outcome: 'applied' | 'duplicate'; warc: WarcPage[] };

/** Where the trust service (src/manager/trust/service.ts) plugs in. */
export interface IngestHooks {
  /** Why uploads from this peer are refused (quarantined, banned), or null. */
  refusal(peer: string): string | null;
  /** True for a check crawl's task id: its upload is compared, not stored. */
  isCheck(taskId: string): boolean;
  ingestCheck(r: UploadedResult, from: string): Promise<'applied' | 'duplicate'>;
  /** A task's final part was committed (called after the commit, never awaited by the crawler). */
  taskFinished(f: { t: TaskRecord; ch: Channel; from: string; r: UploadedResult; receivedAt: number }): Promise<void>;
}

export class IngestService {
  hooks: IngestHooks | null = null;

  constructor(
    private readonly core: ServiceCore,
    private readonly tasks: TaskService,
    private readonly grouping: GroupingOptions,
    private readonly warc: WarcSink | null,
  ) {}

  private refuse(from: string, why: string): never {
    this.core.counters.uploadsRefused++;
    this.core.log.debug({ from, why }, 'upload refused');
    throw new UploadRefused(why);
  }

  /** Validates and applies one upload part from peer `from`. Throws UploadRefused
   * (the crawler is told why) when it cannot be accepted. */
  async ingest(msg: UploadIn, from: string): Promise<'applied' | 'duplicate'> {
    const parsed = resultSchema.safeParse(msg.result);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      return this.refuse(from, `malformed result: ${i?.path.join('.') ?? ''} ${i?.message ?? ''}`.trim());
    }
    const r = parsed.data;
    if (msg.orderId !== r.taskId) return this.refuse(from, 'orderId and result.taskId differ');
    const hooks = this.hooks;
    const refusal = hooks?.refusal(from) ?? null;
    if (refusal !== null) return this.refuse(from, refusal);
    if (hooks?.isCheck(r.taskId) === true) return hooks.ingestCheck(r, from);
    // Serialised per channel (parts of one task, and operator edits of the channel);
    // the reads run outside the commit lock, which is held only to commit.
    const res = await this.core.channelLocks.run(channelOfTask(r.taskId), () => this.apply(msg, r, from));
    if (this.warc !== null && res.warc.length > 0) {
      // The WARC file is an export (the batch is the source of truth): the
      // acknowledgement waits for it only when the exporter falls behind.
      const job = this.warc.append(res.warc).catch((err: unknown) => this.core.log.error({ err: String(err) }, 'WARC export failed'));
      if (this.warc.backlog > WARC_MAX_BACKLOG) await job;
    }
    return res.outcome;
  }

  private duplicate(): Outcome {
    this.core.counters.uploadsDuplicate++;
    return { outcome: 'duplicate', warc: [] };
  }

  /** Tells the hooks a task finished, in the background (the crawler's acknowledgement does not wait). */
  private finished(f: Parameters<IngestHooks['taskFinished']>[0]): void {
    const hooks = this.hooks;
    if (hooks === null) return;
    void Promise.resolve()
      .then(() => hooks.taskFinished(f))
      .catch((err: unknown) => this.core.log.error({ task: f.t.id, err: String(err) }, 'trust hook failed'))
      .then(noop);
  }

  private async apply(msg: UploadIn, r: UploadedResult, from: string): Promise<Outcome> {
    const { repos, counters } = this.core;
    const now = this.core.clock();
    const t = (await this.tasks.active(r.taskId)) ?? (await repos.tasks.finished(r.taskId));
    if (t === undefined) return this.refuse(from, `unknown task ${r.taskId}`);
    if (t.applied?.includes(r.part) === true) return this.duplicate();
    // Only the holder uploads. A crawler the task was migrated to proves the hand-over
    // with the chain of links signed by each holder, starting at the one on record.
    let handedOver = false;
    if (t.holder !== undefined && t.holder !== 'unknown' && t.holder !== from) {
      const why = msg.handover === undefined ? undefined : await checkHandoverChain(msg.handover, t.id, t.holder, from);
      if (msg.handover === undefined || why !== undefined) return this.refuse(from, `upload from a peer that does not hold this task${why !== undefined ? ` (${why})` : ''}`);
      handedOver = true;
    }
    if (t.state === 'done') return this.duplicate();
    const success = r.final && SUCCESS_STATUSES.has(r.status);
    // The final part of a success also needs the channel's recrawl records: read with it.
    const { channel: ch, schedule, history: pastVisits } = await repos.channels.withRecrawl(t.channel, success);
    if (ch === undefined) return this.refuse(from, `channel ${t.channel} no longer exists`);
    if (r.channel.origin !== ch.origin) return this.refuse(from, 'result is for another channel');

    const live = livePages(r);
    for (const url of live.keys()) if (!inScope(url, ch)) return this.refuse(from, `page ${url.slice(0, 200)} is outside the channel`);
    const urls = [...live.keys()];
    const diff = diffPart(r, live, urls, await repos.pages.latestOf(ch.id, urls), { now, taskId: t.id, crawler: from });
    const ops: BatchOp[] = [];
    const warc: WarcPage[] = [];
    ops.push(...(await repos.pages.versionOps(ch.id, diff.versions)));
    for (const v of diff.versions) {
      warc.push({ url: v.meta.url, fetchedAt: v.meta.fetchedAt, text: v.text, meta: { ...v.meta, channel: ch.id } });
    }
    for (const [url, latest] of diff.latest) ops.push(repos.pages.latestOp(ch.id, url, latest));
    // The final part's history, read outside the commit lock (this channel is locked); only
    // a channel that was updated before has one that counts.
    const hadUpdate = success && (schedule?.lu ?? null) !== null;
    const history = hadUpdate ? pastVisits : [];
    // The channel's other stored pages matter to the known list unless the crawl is
    // complete and this is its only part: then the known pages are exactly the ones
    // this part saw, and the scan of the channel's pages is skipped.
    const onlyPart = (t.applied ?? []).length === 0;
    const stored: { url: string; latest: PageLatest }[] = success && !(r.status === 'completed' && onlyPart) ? await repos.pages.latest(ch.id) : [];

    return this.core.commit.run(async () => {
      // The sender may have been quarantined while this part was read (its pages are being distrusted).
      const late = this.hooks?.refusal(from) ?? null;
      if (late !== null) return this.refuse(from, late);
      // Whether the task is still in flight (an overdue check may have failed it meanwhile;
      // it takes this channel's lock, so t is otherwise current).
      const isActive = this.tasks.isActive(t.id);
      if (!isActive && t.state !== 'failed' && t.state !== 'done') t.state = 'failed';
      if (t.applied?.includes(r.part) === true) return this.duplicate();
      // The applied part numbers live in the task record, written in this same batch.
      t.applied = [...(t.applied ?? []), r.part];
      if (handedOver) this.core.log.info({ task: t.id, from: t.holder, to: from }, 'task handed over');
      if (t.holder === undefined || t.holder === 'unknown' || handedOver) t.holder = from;
      addCounts(t, diff, live.size);
      counters.uploadsApplied++;
      counters.pagesStored += diff.versions.length;
      counters.pageBytes += diff.bytes;
      if (!r.final) {
        ops.push(repos.tasks.putOp(t, isActive));
        await repos.commit(ops);
        return { outcome: 'applied' as const, warc };
      }
      // Final part: inter-site URLs, host RTT, and the task's outcome.
      ops.push(...(await interSiteOps(this.core, ch, r.interSiteUrls, now)));
      ops.push(...(await hostRttOps(this.core, ch, msg, from, now)));
      if (!success) {
        if (isActive) await this.tasks.failInCommit(t, `crawler reported ${r.status}${r.reason !== undefined ? `: ${r.reason}` : ''}`, ops);
        else await repos.commit([...ops, repos.tasks.putOp(t, false)]);
        return { outcome: 'applied' as const, warc };
      }
      t.state = 'done';
      t.finishedAt = now;
      ops.push(...repos.tasks.finishOps(t));
      // The update ends the task in flight and changes the aggregates in memory: a failed write puts them back.
      const saved = snapshot(this.core);
      const fl = this.core.inflight.get(ch.id);
      if (isActive) ops.push(...(await recordUpdate(this.core, this.grouping, { ch, t, r, from, now, history, stored, latest: diff.latest })));
      await commitScheduled(this.core, ops, saved, () => {
        if (fl !== undefined && this.core.inflight.get(ch.id) === undefined) this.core.inflight.add(ch.id, fl);
      });
      this.finished({ t, ch, from, r, receivedAt: now });
      return { outcome: 'applied' as const, warc };
    });
  }
}

function noop(): void {}

function addCounts(t: TaskRecord, d: { revisited: number; changed: number; newPages: number; versions: unknown[] }, live: number): void {
  t.revisited += d.revisited;
  t.changed += d.changed;
  t.newPages += d.newPages;
  t.parts++;
  t.pagesStored += d.versions.length;
  t.livePages += live;
}
