// The manager service core, without the network: the channel database, the
// scheduler over src/recrawl, task building, deadlines, and the storage module's
// ingest (src/manager/storage.ts). The libp2p side (signing, routing, the upload
// server) plugs in through `dispatch` and `Storage.ingest`; the HTTP API and the
// benchmark call the same methods.
//
// Every state change runs under one async mutex: the in-memory change and the
// batch that persists it happen together, and the batch is written before the
// caller is answered.
import type { Logger } from 'pino';
import pino from 'pino';
import { TASK_LIMITS, type KnownPage, type Task } from '../crawler/task.js';
import type { WireCoord } from '../dht/signing.js';
import type { RecrawlOptions, RoundReport, StrategyName } from '../recrawl/index.js';
import { channelHistory } from '../recrawl/index.js';
import { buildChannel, channelKey, patchChannel, parseSeedList, ValidationError, type Channel, type ChannelDefaults, type RecrawlHistoryRecord } from './model.js';
import { DATA_INTER_DIGESTS, DATA_INTER_SEEDS, DATA_KNOWN, DEFAULT_GROUP_INTERVALS, MINUTE, Scheduler, type RecrawlMeta, type SchedRecord } from './scheduler.js';
import { K, Store, type BatchOp } from './store.js';
import { DEFAULT_GROUPING, type GroupingOptions } from './estimator.js';
import { HostGate } from './host-gate.js';

export class NotFoundError extends Error {
  override name = 'NotFoundError';
}
export class ConflictError extends Error {
  override name = 'ConflictError';
}

export type TaskState = 'issued' | 'running' | 'done' | 'failed';

export interface TaskRecord {
  id: string;
  channel: string;
  host: string;
  issuedAt: number;
  /** The crawler's deadline (task.deadline); the manager waits `graceMs` more for the upload. */
  deadline: number;
  state: TaskState;
  /** Upload parts already applied (idempotency). */
  applied?: number[];
  /** The recrawl observation window (RecrawlState.rounds) it was issued in. */
  round: number;
  holder?: string;
  reason?: string;
  finishedAt?: number;
  parts: number;
  pagesStored: number;
  livePages: number;
  revisited: number;
  changed: number;
  newPages: number;
}

/** A validator of a stored page (next task's `known`), as kept in `kn!<channel>`. */
export type KnownEntry = KnownPage & { digest: number; depth: number };

export interface IssuedTask {
  task: Task;
  channel: Channel;
  hostCoord?: WireCoord;
}

export interface DispatchResult {
  status: 'accepted' | 'full' | 'leaving' | 'rejected' | 'no-crawler';
  by?: string;
  reason?: string;
}

export interface ManagerOptions {
  dataDir: string;
  strategy?: StrategyName;
  /** Cap a channel's recrawl rate at this multiple of its change rate (paper §4.3). */
  rateCap?: number | null;
  recrawl?: Partial<RecrawlOptions>;
  groupIntervals?: readonly number[];
  /** Group a new channel joins when the operator gives none (default: the middle one). */
  defaultGroup?: number;
  retryDelayMs?: number;
  /** Task deadline = issue + clamp(channel interval, min, max). */
  taskTimeoutMinMs?: number;
  taskTimeoutMaxMs?: number;
  /** Extra time after the crawler's deadline for the upload to arrive. */
  graceMs?: number;
  grouping?: GroupingOptions;
  channelDefaults?: ChannelDefaults;
  /** Write WARC files under <data-dir>/warc (default true). */
  warc?: boolean;
  sync?: boolean;
  clock?: () => number;
  log?: Logger;
}

/** A minimal async mutex. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const r = this.tail.then(fn);
    this.tail = r.then(
      () => undefined,
      () => undefined,
    );
    return r;
  }
}

/** One mutex per key (channel), created on demand and dropped when idle. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const r = prev.then(fn);
    const tail = r.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return r;
  }
}

interface TaskBudget {
  known: number;
  digests: number;
  interDigests: number;
}
const BUDGET: TaskBudget = { known: 5000, digests: 60_000, interDigests: 20_000 };

export class Manager {
  readonly store: Store;
  readonly sched: Scheduler;
  readonly log: Logger;
  readonly clock: () => number;
  readonly lock = new Mutex();
  /** Per-channel serialisation of uploads and operator edits (taken before `lock`). */
  readonly channelLocks = new KeyedMutex();
  readonly recentFailures: TaskRecord[] = [];
  readonly opts: ManagerOptions;
  readonly grouping: GroupingOptions;
  lastRound: RoundReport | null = null;
  dispatch: ((t: IssuedTask) => Promise<DispatchResult>) | null = null;
  private dispatching = new Set<Promise<void>>();
  /** At most one task in flight per host (politeness across channels of one host). */
  private readonly hostGate = new HostGate((taskId) => this.isActive(taskId));
  private seq = 0;
  private channelSeq = 0;
  readonly counters = {
    tasksIssued: 0,
    tasksSucceeded: 0,
    tasksFailed: 0,
    tasksOverdue: 0,
    uploadsApplied: 0,
    uploadsDuplicate: 0,
    uploadsRefused: 0,
    pagesStored: 0,
    pageBytes: 0,
    groupMoves: 0,
    rounds: 0,
  };

  private constructor(store: Store, sched: Scheduler, opts: ManagerOptions, log: Logger, clock: () => number) {
    this.store = store;
    this.sched = sched;
    this.opts = opts;
    this.log = log;
    this.clock = clock;
    this.grouping = opts.grouping ?? DEFAULT_GROUPING;
  }

  /** Opens the database and restores the scheduler, active tasks and counters. */
  static async open(opts: ManagerOptions): Promise<Manager> {
    const log = opts.log ?? pino({ level: 'silent' });
    const clock = opts.clock ?? Date.now;
    const store = await Store.open(opts.dataDir, { sync: opts.sync });
    try {
      const meta = await store.get<RecrawlMeta>(K.meta('recrawl'));
      const recrawl: Partial<RecrawlOptions> = { ...opts.recrawl };
      if (opts.strategy !== undefined) recrawl.strategy = opts.strategy;
      if (opts.rateCap !== undefined) recrawl.rateCap = opts.rateCap;
      const sched = new Scheduler({ recrawl, groupIntervals: opts.groupIntervals ?? DEFAULT_GROUP_INTERVALS, retryDelayMs: opts.retryDelayMs }, clock(), meta);
      const m = new Manager(store, sched, opts, log, clock);
      await store.scan<SchedRecord>('s!', (key, rec) => sched.add(key.slice(2), rec.g, rec.ci, rec));
      let active = 0;
      await store.scan<TaskRecord>('ta!', (_key, t) => {
        active++;
        if (!sched.has(t.channel)) return;
        sched.restoreInFlight(t.channel, t.id, t.issuedAt, t.round, t.deadline, t.state === 'running');
        m.hostGate.hold(t.host, t.id);
      });
      const seqs = await store.get<{ channel: number }>(K.meta('seq'));
      m.channelSeq = seqs?.channel ?? 0;
      const counters = await store.get<Manager['counters']>(K.meta('counters'));
      if (counters !== undefined) Object.assign(m.counters, counters);
      if (meta === undefined) await store.batch([{ type: 'put', key: K.meta('recrawl'), value: sched.meta() }]);
      log.info({ channels: sched.size, active, strategy: sched.state.options.strategy }, 'manager state restored');
      return m;
    } catch (err) {
      await store.close();
      throw err;
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.dispatching]);
    await this.lock.run(async () => {
      await this.store.batch([{ type: 'put', key: K.meta('counters'), value: this.counters }]);
    });
    await this.store.close();
  }

  get groupCount(): number {
    return this.sched.state.groups.length;
  }

  private initialIntervals(): number[] {
    return this.sched.state.groups.map((g) => g.initialInterval);
  }

  // ------------------------------------------------------------ channels

  /** Validates and stores a new channel; returns it. ValidationError/ConflictError otherwise. */
  async addChannel(raw: unknown): Promise<Channel> {
    return this.lock.run(async () => {
      const [ch] = await this.addChannelsLocked([raw]);
      const r = ch!;
      if (r instanceof Error) throw r;
      return r;
    });
  }

  /** Adds many channels in one batch; each element is the channel or the error for that input. */
  async addChannels(raws: unknown[]): Promise<(Channel | Error)[]> {
    return this.lock.run(() => this.addChannelsLocked(raws));
  }

  private async addChannelsLocked(raws: unknown[]): Promise<(Channel | Error)[]> {
    const now = this.clock();
    const out: (Channel | Error)[] = [];
    const built: Channel[] = [];
    const keys: string[] = [];
    let seq = this.channelSeq;
    for (const raw of raws) {
      try {
        const ch = buildChannel(raw, {
          id: `c${(seq + 1).toString(36)}`,
          now,
          groupCount: this.groupCount,
          defaultGroup: this.opts.defaultGroup ?? Math.floor(this.groupCount / 2),
          groupIntervals: this.initialIntervals(),
          defaults: this.opts.channelDefaults,
        });
        seq++;
        built.push(ch);
        keys.push(channelKey(ch.origin, ch.pathPrefixes));
        out.push(ch);
      } catch (err) {
        out.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
    const existing = await this.store.getMany<string>(keys.map((k) => K.channelKey(k)));
    const seen = new Map<string, string>();
    const ops: BatchOp[] = [];
    let bi = 0;
    for (let i = 0; i < out.length; i++) {
      const ch = out[i]!;
      if (ch instanceof Error) continue;
      const key = keys[bi]!;
      const prior = existing[bi] ?? seen.get(key);
      bi++;
      if (prior !== undefined) {
        out[i] = new ConflictError(`channel ${ch.origin} ${ch.pathPrefixes.join(',')} already exists as ${prior}`);
        continue;
      }
      seen.set(key, ch.id);
      ops.push({ type: 'put', key: K.channel(ch.id), value: ch });
      ops.push({ type: 'put', key: K.channelKey(key), value: ch.id });
      ops.push({ type: 'put', key: K.origin(ch.origin, ch.id), value: ch.pathPrefixes });
    }
    const added = out.filter((c): c is Channel => !(c instanceof Error));
    for (const ch of added) this.sched.add(ch.id, ch.group, ch.changeInterval);
    for (const ch of added) ops.push({ type: 'put', key: K.sched(ch.id), value: this.sched.record(ch.id) });
    this.channelSeq = seq;
    ops.push({ type: 'put', key: K.meta('seq'), value: { channel: seq } });
    try {
      await this.store.batch(ops);
    } catch (err) {
      for (const ch of added) this.sched.remove(ch.id);
      throw err;
    }
    return out;
  }

  /** Imports a seed list (one URL per line, '#' comments): each URL becomes a channel
   * (its host, or its directory when the URL has a path). */
  async importSeedList(text: string, extra: Record<string, unknown> = {}): Promise<{ added: Channel[]; skipped: { line?: number; url?: string; reason: string }[] }> {
    const { urls, errors } = parseSeedList(text);
    const skipped: { line?: number; url?: string; reason: string }[] = errors.map((e) => ({ line: e.line, reason: e.reason }));
    const added: Channel[] = [];
    for (let i = 0; i < urls.length; i += 5000) {
      const chunk = urls.slice(i, i + 5000);
      const res = await this.addChannels(chunk.map((url) => ({ ...extra, url })));
      res.forEach((r, j) => (r instanceof Error ? skipped.push({ url: chunk[j]!, reason: r.message }) : added.push(r)));
    }
    return { added, skipped };
  }

  async getChannel(id: string): Promise<Channel> {
    const ch = await this.store.get<Channel>(K.channel(id));
    if (ch === undefined) throw new NotFoundError(`no channel ${id}`);
    return ch;
  }

  async listChannels(opts: { after?: string; limit?: number } = {}): Promise<Channel[]> {
    const rows = await this.store.range<Channel>('c!', { limit: opts.limit ?? 100, ...(opts.after !== undefined ? { after: K.channel(opts.after) } : {}) });
    return rows.map((r) => r.value);
  }

  async updateChannel(id: string, raw: unknown): Promise<Channel> {
    return this.channelLocks.run(id, () => this.lock.run(async () => {
      const ch = await this.getChannel(id);
      const next = patchChannel(ch, raw, { now: this.clock(), groupCount: this.groupCount });
      if (next.group !== ch.group) this.sched.setGroup(id, next.group);
      if (next.changeInterval !== ch.changeInterval) this.sched.setChangeInterval(id, next.changeInterval);
      await this.store.batch([
        { type: 'put', key: K.channel(id), value: next },
        { type: 'put', key: K.sched(id), value: this.sched.record(id) },
      ]);
      return next;
    }));
  }

  /** Deletes a channel and everything stored for it (pages included). */
  async deleteChannel(id: string): Promise<void> {
    await this.channelLocks.run(id, () => this.lock.run(async () => {
      const ch = await this.getChannel(id);
      const ops: BatchOp[] = [
        { type: 'del', key: K.channel(id) },
        { type: 'del', key: K.channelKey(channelKey(ch.origin, ch.pathPrefixes)) },
        { type: 'del', key: K.origin(ch.origin, id) },
        { type: 'del', key: K.sched(id) },
        { type: 'del', key: K.history(id) },
        { type: 'del', key: K.known(id) },
        { type: 'del', key: K.interSeeds(id) },
        { type: 'del', key: K.interDigests(id) },
      ];
      for (const k of await this.store.keys(K.pageLatestPrefix(id))) ops.push({ type: 'del', key: k });
      for (const k of await this.store.keys(`pv!${id}!`)) ops.push({ type: 'del', key: k });
      for (const k of await this.store.keys(`px!${id}!`)) ops.push({ type: 'del', key: k });
      await this.store.batch(ops);
      this.sched.remove(id);
    }));
  }

  async history(id: string): Promise<RecrawlHistoryRecord[]> {
    await this.getChannel(id);
    return (await this.store.get<RecrawlHistoryRecord[]>(K.history(id))) ?? [];
  }

  // ------------------------------------------------------------ scheduling

  private taskTimeout(channelId: string): number {
    const lo = this.opts.taskTimeoutMinMs ?? 10 * MINUTE;
    const hi = this.opts.taskTimeoutMaxMs ?? 6 * 60 * MINUTE;
    // Whole milliseconds: the crawler's task schema wants an integer deadline, and
    // IIR/ICR intervals (minutes) are fractional.
    return Math.round(Math.min(hi, Math.max(lo, this.sched.intervalMs(channelId))));
  }

  get graceMs(): number {
    return this.opts.graceMs ?? 5 * MINUTE;
  }

  /** Turns up to `limit` due channels into tasks, persisted before they are returned
   * (and, when a dispatcher is set, handed to it). */
  async issueDue(limit = 1000): Promise<IssuedTask[]> {
    const issued = await this.lock.run(async () => {
      const now = this.clock();
      const ids = this.sched.due(now, limit);
      if (ids.length === 0) return [];
      // Read only the optional records the channel has (misses cost LevelDB lookups).
      const keys: string[] = [];
      const at: [number, number, number, number][] = [];
      for (const id of ids) {
        const x = this.sched.dataOf(id);
        const slot = (bit: number, key: string): number => {
          if (bit !== 0 && (x & bit) === 0) return -1;
          keys.push(key);
          return keys.length - 1;
        };
        at.push([slot(0, K.channel(id)), slot(DATA_KNOWN, K.known(id)), slot(DATA_INTER_SEEDS, K.interSeeds(id)), slot(DATA_INTER_DIGESTS, K.interDigests(id))]);
      }
      const vals = await this.store.getMany<unknown>(keys);
      const val = <T>(i: number): T | undefined => (i < 0 ? undefined : (vals[i] as T | undefined));
      const chans: Channel[] = [];
      const parts: { known: KnownEntry[]; inter: string[]; xd: number[] }[] = [];
      const taken = new Set<string>();
      at.forEach(([c, k, s, x]) => {
        const ch = val<Channel>(c);
        // A channel whose host is being crawled stays due; the round-robin scan comes back to it.
        if (ch === undefined || taken.has(ch.host) || this.hostGate.busy(ch.host)) return;
        taken.add(ch.host);
        chans.push(ch);
        parts.push({ known: val<KnownEntry[]>(k) ?? [], inter: val<string[]>(s) ?? [], xd: val<number[]>(x) ?? [] });
      });
      const hosts = [...new Set(chans.map((c) => c.host))];
      const coords = await this.store.getMany<WireCoord>(hosts.map((h) => K.hostCoord(h)));
      const coordOf = new Map<string, WireCoord>();
      hosts.forEach((h, i) => coords[i] !== undefined && coordOf.set(h, coords[i]!));
      const ops: BatchOp[] = [];
      const out: IssuedTask[] = [];
      chans.forEach((ch, i) => {
        const p = parts[i]!;
        const id = `${ch.id}.${now.toString(36)}.${(this.seq++).toString(36)}`;
        const deadline = now + this.taskTimeout(ch.id);
        const task = buildTask(ch, id, deadline, p.known, p.inter, p.xd);
        const rec: TaskRecord = { id, channel: ch.id, host: ch.host, issuedAt: now, deadline, round: this.sched.state.rounds, state: 'issued', parts: 0, pagesStored: 0, livePages: 0, revisited: 0, changed: 0, newPages: 0 };
        this.sched.markIssued(ch.id, id, now, deadline);
        this.hostGate.hold(ch.host, id);
        // While a task is active its record lives under ta! only; t! gets it once finished.
        // The channel's s! record is not rewritten: on restart the active task restores
        // last-issue time, in-flight id and the submit count (Scheduler.restoreInFlight).
        ops.push({ type: 'put', key: K.active(id), value: rec });
        const hc = coordOf.get(ch.host);
        out.push(hc !== undefined ? { task, channel: ch, hostCoord: hc } : { task, channel: ch });
      });
      await this.store.batch(ops);
      this.counters.tasksIssued += out.length;
      return out;
    });
    if (this.dispatch !== null) for (const t of issued) this.startDispatch(t);
    return issued;
  }

  private startDispatch(t: IssuedTask): void {
    const d = this.dispatch!;
    const p = (async () => {
      let r: DispatchResult;
      try {
        r = await d(t);
      } catch (err) {
        r = { status: 'no-crawler', reason: String((err as Error).message ?? err) };
      }
      await this.onDispatched(t.task.id, r);
    })().catch((err: unknown) => this.log.error({ task: t.task.id, err: String(err) }, 'dispatch bookkeeping failed'));
    this.dispatching.add(p);
    void p.finally(() => this.dispatching.delete(p));
  }

  /** Number of dispatches (sign + route) in progress. */
  get dispatchingCount(): number {
    return this.dispatching.size;
  }

  /** True while the task is in flight (issued or running). */
  isActive(taskId: string): boolean {
    const ch = channelOfTask(taskId);
    return this.sched.has(ch) && this.sched.inFlight(ch) === taskId;
  }

  /** The record of a task in flight (from ta!), or undefined. */
  async activeTask(taskId: string): Promise<TaskRecord | undefined> {
    if (!this.isActive(taskId)) return undefined;
    return this.store.get<TaskRecord>(K.active(taskId));
  }

  /** Records where a task went; a task no crawler took fails at once. Serialised
   * with the channel's uploads so a fast upload and this bookkeeping never race. */
  async onDispatched(taskId: string, r: DispatchResult): Promise<void> {
    await this.channelLocks.run(channelOfTask(taskId), async () => {
      const t = await this.activeTask(taskId);
      if (t === undefined || t.state !== 'issued') return;
      await this.lock.run(async () => {
        if (!this.isActive(taskId)) return;
        if (r.status === 'accepted') {
          t.state = 'running';
          if (r.by !== undefined && t.holder === undefined) t.holder = r.by;
          this.sched.setRunning(t.channel, taskId);
          await this.store.batch([{ type: 'put', key: K.active(taskId), value: t }]);
          return;
        }
        await this.failLocked(t, `${r.status}${r.reason !== undefined ? `: ${r.reason}` : ''}`);
      });
    });
  }

  async failLocked(t: TaskRecord, reason: string, extra: BatchOp[] = []): Promise<void> {
    const now = this.clock();
    t.state = 'failed';
    t.reason = reason;
    t.finishedAt = now;
    const ops: BatchOp[] = [{ type: 'put', key: K.task(t.id), value: t }, { type: 'del', key: K.active(t.id) }, ...extra];
    if (this.sched.has(t.channel) && this.sched.markFailure(t.channel, t.id, now)) {
      ops.push({ type: 'put', key: K.sched(t.channel), value: this.sched.record(t.channel) });
    }
    await this.store.batch(ops);
    this.counters.tasksFailed++;
    this.recentFailures.push(t);
    if (this.recentFailures.length > 200) this.recentFailures.splice(0, this.recentFailures.length - 200);
    this.log.info({ task: t.id, channel: t.channel, reason }, 'task failed');
  }

  /** Marks tasks past their deadline (plus grace) as failed; their channels become due. */
  async failOverdue(): Promise<number> {
    const due = this.sched.overdue(this.clock(), this.graceMs, 10_000);
    let n = 0;
    for (const [ch, taskId] of due) {
      await this.channelLocks.run(ch, async () => {
        const t = await this.activeTask(taskId);
        await this.lock.run(async () => {
          if (!this.isActive(taskId)) return;
          const rec: TaskRecord = t ?? { id: taskId, channel: ch, host: '', issuedAt: 0, deadline: 0, round: 0, state: 'issued', parts: 0, pagesStored: 0, livePages: 0, revisited: 0, changed: 0, newPages: 0 };
          await this.failLocked(rec, 'deadline passed without a final upload');
          this.counters.tasksOverdue++;
          n++;
        });
      });
    }
    return n;
  }

  /** Runs the recrawl strategy's reassignment if its trigger fired; persists the new state. */
  async maybeReassign(): Promise<RoundReport | null> {
    return this.lock.run(async () => {
      const r = this.sched.maybeReassign(this.clock());
      if (r === null) return null;
      this.lastRound = r;
      this.counters.rounds++;
      await this.store.batch([
        { type: 'put', key: K.meta('recrawl'), value: this.sched.meta() },
        { type: 'put', key: K.meta('lastRound'), value: r },
      ]);
      this.log.info({ round: this.sched.state.rounds, intervalsMin: r.intervals }, 'recrawl intervals reassigned');
      return r;
    });
  }

  /** One scheduler step: overdue tasks, reassignment, then due channels → tasks. */
  async tick(limit = 1000): Promise<IssuedTask[]> {
    await this.failOverdue();
    await this.maybeReassign();
    return this.issueDue(limit);
  }

  // ------------------------------------------------------------ reporting

  /** Tasks by state: queued = channels due now, not yet issued. */
  taskSummary(): { queued: number; issued: number; running: number; failedRecent: TaskRecord[] } {
    const f = this.sched.countInFlight();
    return { queued: this.sched.countDue(this.clock()), issued: f.issued, running: f.running, failedRecent: [...this.recentFailures].reverse() };
  }

  /** Records of tasks in flight (at most `limit`). */
  async activeTasks(limit: number, state?: 'issued' | 'running'): Promise<TaskRecord[]> {
    const ids = this.sched.inFlightTasks(limit, state).map(([, t]) => t);
    const recs = await this.store.getMany<TaskRecord>(ids.map((id) => K.active(id)));
    return recs.filter((r): r is TaskRecord => r !== undefined);
  }

  /** Per group: size, interval, and the paper's update quality (equation 5 restricted
   * to the group): mean over its channels of λ_actual / λ_expected. */
  groups(): { group: number; channels: number; updated: number; intervalMinutes: number; initialIntervalMinutes: number; updateQuality: number | null; weight: number }[] {
    const st = this.sched.state;
    const k = st.groups.length;
    const now = this.clock() / MINUTE;
    const sum = new Array<number>(k).fill(0);
    const cnt = new Array<number>(k).fill(0);
    const size = new Array<number>(k).fill(0);
    for (const c of st.channels) {
      size[c.group]! += 1;
      if (c.updateTimes.length === 0) continue;
      const h = channelHistory(c, now, st.groups[c.group]!.interval);
      sum[c.group]! += h.rate * c.changeInterval;
      cnt[c.group]! += 1;
    }
    return st.groups.map((g, i) => ({
      group: i,
      channels: size[i]!,
      updated: cnt[i]!,
      intervalMinutes: g.interval,
      initialIntervalMinutes: g.initialInterval,
      updateQuality: cnt[i]! > 0 ? sum[i]! / cnt[i]! : null,
      weight: 2 ** (k - 1 - i),
    }));
  }

  /** The paper's weighted update quality over all channels with at least one update. */
  updateQuality(): { weighted: number | null; unweighted: number | null } {
    const gs = this.groups();
    let w = 0;
    let u = 0;
    let n = 0;
    for (const g of gs) {
      if (g.updateQuality === null) continue;
      // Σ over channels with at least one update of R_g × λ_actual / λ_expected, / N
      w += g.weight * g.updateQuality * g.updated;
      u += g.updateQuality * g.updated;
      n += g.updated;
    }
    return n > 0 ? { weighted: w / n, unweighted: u / n } : { weighted: null, unweighted: null };
  }
}

/** The channel id of a task id (`<channel>.<time36>.<seq36>`). */
export function channelOfTask(taskId: string): string {
  const i = taskId.indexOf('.');
  return i < 0 ? taskId : taskId.slice(0, i);
}

/** Builds the crawler task for a channel (paper §2.1 fields), trimmed to fit an order. */
export function buildTask(ch: Channel, id: string, deadline: number, known: KnownEntry[], inter: string[], xd: number[]): Task {
  const seeds = [...new Set([...ch.seeds, ...inter])].slice(0, Math.min(TASK_LIMITS.seeds, 2000));
  const k = known.length > BUDGET.known ? known.slice(0, BUDGET.known) : known;
  const digests = known.length > BUDGET.digests ? known.slice(0, BUDGET.digests) : known;
  return {
    id,
    scope: { origin: ch.origin, pathPrefixes: ch.pathPrefixes },
    seeds,
    filters: ch.filters,
    expectedPages: Math.min(TASK_LIMITS.expectedPages, Math.max(ch.expectedPages, known.length)),
    maxDepth: ch.depth,
    maxPages: ch.maxPages,
    pageDigests: digests.map((e) => e.digest),
    interSiteDigests: xd.length > BUDGET.interDigests ? xd.slice(xd.length - BUDGET.interDigests) : xd,
    known: k.map((e) => {
      const o: KnownPage = { url: e.url, digest: e.digest, depth: e.depth };
      if (e.etag !== undefined) o.etag = e.etag;
      if (e.lastModified !== undefined) o.lastModified = e.lastModified;
      return o;
    }),
    deadline,
    delayMs: ch.delayMs,
  };
}

export { ValidationError };
