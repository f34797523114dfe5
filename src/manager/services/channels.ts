// The channel database as the operator sees it: add (one, many, a seed list),
// read, list, change and delete channels. Every change reaches the channel's
// scheduling record, its due-index entry and the window aggregates in the same
// batch.
import type { ChannelRecord } from '../../recrawl/index.js';
import { ConflictError, NotFoundError } from '../errors.js';
import type { BatchOp } from '../data/repositories.js';
import { buildChannel, channelKey, patchChannel, parseSeedList, type Channel, type ChannelDefaults, type RecrawlHistoryRecord } from '../domain/channel.js';
import { hostKey } from '../domain/in-flight.js';
import type { SchedRecord } from '../domain/schedule-record.js';
import type { ServiceCore } from './core.js';
import { commitScheduled, placeOp, releaseOps, rescheduleOps, snapshot, statsOp, unplaceOps } from './schedules.js';

export interface ChannelServiceOptions {
  /** Group a new channel joins when the operator gives none (default: the middle one). */
  defaultGroup?: number;
  channelDefaults?: ChannelDefaults;
}

export interface SeedImport {
  added: Channel[];
  skipped: { line?: number; url?: string; reason: string }[];
}

/** Seed list lines added per batch. */
const IMPORT_CHUNK = 5000;

export class ChannelService {
  private seq: number;

  constructor(
    private readonly core: ServiceCore,
    private readonly opts: ChannelServiceOptions,
    channelSeq: number,
  ) {
    this.seq = channelSeq;
  }

  private get groupCount(): number {
    return this.core.sched.state.groups.length;
  }

  /** Validates and stores a new channel; ValidationError or ConflictError otherwise. */
  async add(raw: unknown): Promise<Channel> {
    const [r] = await this.addMany([raw]);
    if (r instanceof Error) throw r;
    return r!;
  }

  /** Adds many channels in one batch; each element is the channel or the error for that input. */
  addMany(raws: unknown[]): Promise<(Channel | Error)[]> {
    return this.core.commit.run(() => this.addLocked(raws));
  }

  private async addLocked(raws: unknown[]): Promise<(Channel | Error)[]> {
    const { repos, sched } = this.core;
    const now = this.core.clock();
    const initial = sched.state.groups.map((g) => g.initialInterval);
    const out: (Channel | Error)[] = [];
    const fresh: { at: number; ch: Channel; identity: string }[] = [];
    let seq = this.seq;
    for (const raw of raws) {
      try {
        const ch = buildChannel(raw, {
          id: `c${(seq + 1).toString(36)}`,
          now,
          groupCount: this.groupCount,
          defaultGroup: this.opts.defaultGroup ?? Math.floor(this.groupCount / 2),
          groupIntervals: initial,
          defaults: this.opts.channelDefaults,
        });
        seq++;
        fresh.push({ at: out.length, ch, identity: channelKey(ch.origin, ch.pathPrefixes) });
        out.push(ch);
      } catch (err) {
        out.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
    const existing = await repos.channels.idsOf(fresh.map((f) => f.identity));
    const seen = new Map<string, string>();
    const ops: BatchOp[] = [];
    const added: Channel[] = [];
    fresh.forEach(({ at, ch, identity }, i) => {
      const prior = existing[i] ?? seen.get(identity);
      if (prior !== undefined) {
        out[at] = new ConflictError(`channel ${ch.origin} ${ch.pathPrefixes.join(',')} already exists as ${prior}`);
        return;
      }
      seen.set(identity, ch.id);
      ops.push(...repos.channels.addOps(ch, identity));
      added.push(ch);
    });
    const saved = snapshot(this.core);
    for (const ch of added) {
      const rec = sched.create(ch.group, ch.changeInterval, hostKey(ch.host));
      ops.push(repos.channels.scheduleOp(ch.id, rec), placeOp(this.core, sched.entry(ch.id, rec)));
    }
    ops.push(repos.meta.channelSeqOp(seq), statsOp(this.core));
    await commitScheduled(this.core, ops, saved);
    this.seq = seq;
    return out;
  }

  /** Imports a seed list (one URL per line, '#' comments): each URL becomes a channel
   * (its host, or its directory when the URL has a path). */
  async importSeedList(text: string, extra: Record<string, unknown> = {}): Promise<SeedImport> {
    const { urls, errors } = parseSeedList(text);
    const skipped: SeedImport['skipped'] = errors.map((e) => ({ line: e.line, reason: e.reason }));
    const added: Channel[] = [];
    for (let i = 0; i < urls.length; i += IMPORT_CHUNK) {
      const chunk = urls.slice(i, i + IMPORT_CHUNK);
      const res = await this.addMany(chunk.map((url) => ({ ...extra, url })));
      res.forEach((r, j) => (r instanceof Error ? skipped.push({ url: chunk[j]!, reason: r.message }) : added.push(r)));
    }
    return { added, skipped };
  }

  async get(id: string): Promise<Channel> {
    const ch = await this.core.repos.channels.get(id);
    if (ch === undefined) throw new NotFoundError(`no channel ${id}`);
    return ch;
  }

  list(opts: { after?: string; limit?: number } = {}): Promise<Channel[]> {
    return this.core.repos.channels.list(opts);
  }

  async update(id: string, raw: unknown): Promise<Channel> {
    const { sched, repos, inflight } = this.core;
    return this.core.channelLocks.run(id, () =>
      this.core.commit.run(async () => {
        const ch = await this.get(id);
        const next = patchChannel(ch, raw, { now: this.core.clock(), groupCount: this.groupCount });
        const rec = await repos.channels.schedule(id);
        const ops = [repos.channels.putOp(next)];
        const saved = snapshot(this.core);
        if (rec !== undefined) {
          const fl = inflight.get(id);
          const round = fl?.round;
          let after: SchedRecord = sched.regroup(rec, next.group, fl);
          if (next.changeInterval !== ch.changeInterval) after = sched.withChangeInterval(after, next.changeInterval);
          if (fl === undefined) ops.push(...rescheduleOps(this.core, id, rec, after));
          else {
            ops.push(repos.channels.scheduleOp(id, after));
            // A move counts the task in flight as submitted in the current window (regroup set
            // fl.round): its active record, which holds that window across a restart, says so too.
            const t = fl.round !== round ? await repos.tasks.active(fl.task) : undefined;
            if (t !== undefined) ops.push(repos.tasks.putOp({ ...t, round: fl.round }, true));
          }
          ops.push(statsOp(this.core));
        }
        await commitScheduled(this.core, ops, saved);
        return next;
      }),
    );
  }

  /** Deletes a channel and everything stored for it (pages included). Its task in flight,
   * if any, ends as failed; the channels parked behind its host are free to go. */
  async delete(id: string): Promise<void> {
    const { repos, sched, inflight } = this.core;
    await this.core.channelLocks.run(id, () =>
      this.core.commit.run(async () => {
        const ch = await this.get(id);
        const ops = [...repos.channels.deleteOps(ch, channelKey(ch.origin, ch.pathPrefixes)), ...(await repos.pages.deleteChannelOps(id))];
        const rec = await repos.channels.schedule(id);
        const fl = inflight.get(id);
        const saved = snapshot(this.core);
        if (rec !== undefined) {
          if (fl === undefined) ops.push(...unplaceOps(this.core, id, rec));
          sched.removed(rec, fl);
          ops.push(statsOp(this.core));
        }
        if (fl !== undefined) {
          const t = await repos.tasks.active(fl.task);
          if (t !== undefined) ops.push(...repos.tasks.finishOps({ ...t, state: 'failed', reason: 'channel deleted', finishedAt: this.core.clock() }));
          inflight.end(id);
          ops.push(...(await releaseOps(this.core, fl.hh)));
        }
        await commitScheduled(this.core, ops, saved, () => fl !== undefined && inflight.add(id, fl));
      }),
    );
  }

  /** The channel's recrawl state: its record as src/recrawl sees it (window counters,
   * updates), its task in flight, when it is next due and its interval. */
  async recrawlState(id: string): Promise<ChannelRecord & { inFlight: string | null; dueAt: number | null; intervalMs: number }> {
    const { sched, repos, inflight } = this.core;
    const rec = await repos.channels.schedule(id);
    if (rec === undefined) throw new NotFoundError(`no channel ${id}`);
    const fl = inflight.get(id);
    const dueAt = sched.dueAt(rec, fl);
    return { ...sched.view(rec, fl), inFlight: fl?.task ?? null, dueAt: Number.isFinite(dueAt) ? dueAt : null, intervalMs: sched.intervalMs(rec) };
  }

  /** When and how often the channel is recrawled (the API's view). */
  async schedule(id: string): Promise<{ intervalMinutes: number; dueAt: number | null; inFlight: string | null; updates: number }> {
    const r = await this.recrawlState(id);
    return { intervalMinutes: r.intervalMs / 60_000, dueAt: r.dueAt, inFlight: r.inFlight, updates: r.updateTimes.length };
  }

  async history(id: string): Promise<RecrawlHistoryRecord[]> {
    await this.get(id);
    return this.core.repos.channels.history(id);
  }
}
