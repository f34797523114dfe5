// Tasks from issue to end: due channels are streamed from the due index in issue
// order and become tasks (persisted before they are handed to the dispatcher),
// the dispatcher's answer is recorded, tasks past their deadline fail, and the
// recrawl strategy's round runs when its trigger fires. The network side plugs in
// through `dispatch`.
import type { Task } from '../../crawler/task.js';
import type { WireCoord } from '../../dht/signing.js';
import type { RoundReport, SystemLoad } from '../../recrawl/index.js';
import { IcrScan } from '../../recrawl/window-stats.js';
import type { BatchOp } from '../data/repositories.js';
import type { Channel } from '../domain/channel.js';
import { DueMerge, timedAt, type MergeStep, type Stream } from '../domain/due-order.js';
import { hostKey } from '../domain/in-flight.js';
import type { TaskRecord } from '../domain/records.js';
import type { DueEntry, InFlight } from '../domain/schedule-record.js';
import { DATA_INTER_DIGESTS, DATA_INTER_SEEDS, DATA_KNOWN, MINUTE, Scheduler } from '../domain/scheduler.js';
import { buildTask, channelOfTask, taskId } from '../domain/task-builder.js';
import type { ServiceCore } from './core.js';
import { commitScheduled, endOps, releaseOps, snapshot, statsOp } from './schedules.js';

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

export type Dispatcher = (t: IssuedTask) => Promise<DispatchResult>;

export interface TaskServiceOptions {
  /** Task deadline = issue + clamp(channel interval, min, max). */
  taskTimeoutMinMs?: number;
  taskTimeoutMaxMs?: number;
  /** Extra time after the crawler's deadline for the upload to arrive. */
  graceMs?: number;
  /** Tasks ask volunteers to upload their exchanges (`--archive full`). */
  archiveExchanges?: boolean;
  /** At most this many tasks in flight (the memory the manager keeps per task is bounded by it). */
  maxInFlight?: number;
}

export const DEFAULT_MAX_IN_FLIGHT = 100_000;
/** Failed tasks kept for the API, and reassignment rounds kept (in the database too). */
const RECENT_FAILURES = 200;
const ROUNDS_KEPT = 50;
/** Overdue tasks failed per step. */
const OVERDUE_PER_STEP = 10_000;
/** Parks and moves written ahead of a pass's issue batch once this many are pending. */
const FLUSH_OPS = 5000;
/** Tasks built and committed per pass of issueDue: a pass's batch and the records' JSON
 * live until its commit returns, and V8 promotes what outlives two young-generation
 * collections into the old generation, whose garbage waits for a full collection (a
 * 5 000-task pass raised the issue phase's heap by ≈ 40 MB; docs/manager.md). */
const ISSUE_PER_PASS = 1000;

/** What a pass over the due channels is told, one step at a time. */
type PassStep = Extract<MergeStep, { kind: 'due' | 'move' }>;

export class TaskService {
  /** Set by the network side (network.ts); null: issued tasks wait for their deadline. */
  dispatch: Dispatcher | null = null;
  /** The crawlers' load aggregated now (network.ts, crawler-load.ts), or null when no
   * crawler was heard from recently; unset (no network): no load is observed. */
  loadSource: (() => SystemLoad | null) | null = null;
  /** Told of every task a crawler accepted and never finished (the trust service). */
  onLost: ((t: TaskRecord) => void) | null = null;
  readonly recentFailures: TaskRecord[] = [];
  private readonly dispatching = new Set<Promise<void>>();
  private seq = 0;

  constructor(
    private readonly core: ServiceCore,
    private readonly opts: TaskServiceOptions,
    /** The last reassignment rounds, oldest first. */
    readonly rounds: RoundReport[],
  ) {}

  get maxInFlight(): number {
    return this.opts.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  }

  /** Restores the tasks in flight (startup); returns how many there were. */
  async restore(): Promise<number> {
    const { inflight } = this.core;
    return this.core.repos.tasks.scanActive((t) => {
      const prev = inflight.get(t.channel);
      if (prev !== undefined && prev.issuedAt > t.issuedAt) return; // an older task; the newer one holds the channel
      inflight.add(t.channel, { task: t.id, issuedAt: t.issuedAt, round: t.round, deadline: t.deadline, running: t.state === 'running', hh: hostKey(t.host) });
    });
  }

  /** Waits for the dispatches in progress (shutdown). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.dispatching]);
  }

  get graceMs(): number {
    return this.opts.graceMs ?? 5 * MINUTE;
  }

  get lastRound(): RoundReport | null {
    return this.rounds[this.rounds.length - 1] ?? null;
  }

  private timeout(e: DueEntry): number {
    const lo = this.opts.taskTimeoutMinMs ?? 10 * MINUTE;
    const hi = this.opts.taskTimeoutMaxMs ?? 6 * 60 * MINUTE;
    // Whole milliseconds: the crawler's task schema wants an integer deadline, and
    // IIR/ICR intervals (minutes) are fractional.
    return Math.round(Math.min(hi, Math.max(lo, this.core.sched.intervalMsOf(e.g, e.ci))));
  }

  /**
   * Walks the due channels in issue order (domain/due-order.ts), reading the due index
   * in chunks; `visit` is told each due channel and each misplaced entry to move, and
   * may stop the walk. With `advance`, the streams' cursors move past what was taken
   * (the caller writes the removal of every entry it was told about).
   */
  async walkDue(now: number, chunk: number, advance: boolean, visit: (s: PassStep) => 'stop' | void | Promise<'stop' | void>): Promise<void> {
    const { repos, sched } = this.core;
    const merge = new DueMerge(sched, now);
    const readers = repos.due.readers(now);
    const last: (string | null)[] = new Array<string | null>(repos.due.streams).fill(null);
    try {
      for (;;) {
        const step = merge.next();
        if (step.kind === 'need') {
          const items = await readers.next(step.stream, chunk);
          if (items.length > 0) last[step.stream] = items[items.length - 1]!.key;
          merge.feed(step.stream, items, items.length < chunk);
          continue;
        }
        if (step.kind === 'done' || (await visit(step)) === 'stop') break;
      }
      if (advance) for (let i = 0; i < repos.due.streams; i++) repos.due.setCursor(i, merge.untaken(i)?.key ?? null, last[i]!);
    } finally {
      await readers.close();
    }
  }

  /** Turns up to `limit` due channels into tasks, persisted before they are returned
   * (and, when a dispatcher is set, handed to it). Never more than `maxInFlight` in flight. */
  async issueDue(limit = 1000): Promise<IssuedTask[]> {
    const issued: IssuedTask[] = [];
    // In passes of at most ISSUE_PER_PASS, each committed on its own: what a pass builds
    // (its batch, the records' JSON) dies before the next, instead of living through
    // V8's young generation into the old one (see ISSUE_PER_PASS).
    while (issued.length < limit) {
      const want = Math.min(ISSUE_PER_PASS, limit - issued.length);
      const got = await this.core.commit.run(() => this.issueLocked(want));
      if (this.dispatch !== null) for (const t of got) this.startDispatch(this.dispatch, t);
      for (const t of got) issued.push(t);
      if (got.length < want) break;
    }
    return issued;
  }

  private async issueLocked(limit: number): Promise<IssuedTask[]> {
    const { sched, repos, inflight } = this.core;
    const now = this.core.clock();
    const room = Math.min(limit, this.maxInFlight - inflight.size);
    if (room <= 0) return [];
    const picked: { e: DueEntry; at: Stream }[] = [];
    // One task per host: a due channel whose host is busy is parked under it until the
    // host's task ends (written ahead: it is true whatever this pass issues); one whose
    // host is taken by a channel issued in this pass is parked with the issue.
    const taken = new Set<number>();
    const ahead: BatchOp[] = [];
    const withIssue: BatchOp[] = [];
    const at = (e: DueEntry) => timedAt(sched, e);
    try {
      await this.walkDue(now, Math.min(1024, Math.max(32, room)), true, async (s) => {
        if (s.kind === 'move') ahead.push(...repos.due.moveOps(s.e, s.from, s.to, at(s.e)));
        else if (inflight.busy(s.e.hh)) ahead.push(...repos.due.parkOps(s.e, s.at, at(s.e)));
        else if (taken.has(s.e.hh)) withIssue.push(...repos.due.parkOps(s.e, s.at, at(s.e)));
        else {
          taken.add(s.e.hh);
          picked.push({ e: s.e, at: s.at });
          if (picked.length >= room) return 'stop';
        }
        if (ahead.length >= FLUSH_OPS) await repos.commit(ahead.splice(0));
      });
      return await this.issuePicked(now, picked, [...ahead, ...withIssue]);
    } catch (err) {
      repos.due.resetCursors();
      throw err;
    }
  }

  /** Builds and persists the tasks of the channels a pass picked (with the pass's other writes). */
  private async issuePicked(now: number, picked: { e: DueEntry; at: Stream }[], ops: BatchOp[]): Promise<IssuedTask[]> {
    const { sched, repos, inflight } = this.core;
    if (picked.length === 0) {
      await repos.commit(ops);
      return [];
    }
    const bits = new Map(picked.map(({ e }) => [e.id, e.x]));
    const inputs = await repos.channels.taskInputs(
      picked.map(({ e }) => e.id),
      (id) => {
        const x = bits.get(id)!;
        return { known: (x & DATA_KNOWN) !== 0, interSeeds: (x & DATA_INTER_SEEDS) !== 0, interDigests: (x & DATA_INTER_DIGESTS) !== 0 };
      },
    );
    const hosts = [...new Set(inputs.flatMap((x) => (x.channel !== undefined ? [x.channel.host] : [])))];
    const coords = await repos.hosts.coords(hosts);
    const coordOf = new Map<string, WireCoord>();
    hosts.forEach((h, i) => coords[i] !== undefined && coordOf.set(h, coords[i]!));
    const saved = snapshot(this.core);
    const out: IssuedTask[] = [];
    const flying: [string, InFlight][] = [];
    picked.forEach(({ e, at }, i) => {
      ops.push(repos.due.delOp(e, at, timedAt(sched, e)));
      const { channel: ch, known, interSeeds, interDigests } = inputs[i]!;
      if (ch === undefined) return; // an entry left by a channel that is gone
      const id = taskId(ch.id, now, this.seq++);
      const deadline = now + this.timeout(e);
      const task = buildTask(ch, id, deadline, known, interSeeds, interDigests);
      if (this.opts.archiveExchanges === true) task.archive = 'full';
      const rec: TaskRecord = { id, channel: ch.id, host: ch.host, issuedAt: now, deadline, round: sched.state.rounds, state: 'issued', parts: 0, pagesStored: 0, livePages: 0, revisited: 0, changed: 0, newPages: 0 };
      // While a task is active only its record is written: it holds the channel's issue
      // time and window until the task ends (InFlight; the channel's record is written then).
      ops.push(repos.tasks.putOp(rec, true));
      sched.submitted(e.g);
      flying.push([ch.id, { task: id, issuedAt: now, round: rec.round, deadline, running: false, hh: e.hh }]);
      const hc = coordOf.get(ch.host);
      out.push(hc !== undefined ? { task, channel: ch, hostCoord: hc } : { task, channel: ch });
    });
    ops.push(statsOp(this.core));
    await commitScheduled(this.core, ops, saved);
    for (const [ch, f] of flying) inflight.add(ch, f);
    this.core.counters.tasksIssued += out.length;
    return out;
  }

  private startDispatch(d: Dispatcher, t: IssuedTask): void {
    const p = (async () => {
      let r: DispatchResult;
      try {
        r = await d(t);
      } catch (err) {
        r = { status: 'no-crawler', reason: String((err as Error).message ?? err) };
      }
      await this.onDispatched(t.task.id, r);
    })().catch((err: unknown) => this.core.log.error({ task: t.task.id, err: String(err) }, 'dispatch bookkeeping failed'));
    this.dispatching.add(p);
    void p.finally(() => this.dispatching.delete(p));
  }

  /** Number of dispatches (sign + route) in progress. */
  get dispatchingCount(): number {
    return this.dispatching.size;
  }

  /** True while the task is in flight (issued or running). */
  isActive(id: string): boolean {
    return this.core.inflight.isActive(channelOfTask(id), id);
  }

  /** The record of a task in flight, or undefined. */
  async active(id: string): Promise<TaskRecord | undefined> {
    if (!this.isActive(id)) return undefined;
    return this.core.repos.tasks.active(id);
  }

  /** Records of tasks in flight (at most `limit`), optionally only issued or only running. */
  async activeList(limit: number, state?: 'issued' | 'running'): Promise<TaskRecord[]> {
    return this.core.repos.tasks.activeMany(this.core.inflight.list(limit, state).map(([, t]) => t));
  }

  /** Records where a task went; a task no crawler took fails at once. Serialised
   * with the channel's uploads so a fast upload and this bookkeeping never race. */
  async onDispatched(id: string, r: DispatchResult): Promise<void> {
    const { repos, inflight } = this.core;
    await this.core.channelLocks.run(channelOfTask(id), async () => {
      const t = await this.active(id);
      if (t === undefined || t.state !== 'issued') return;
      await this.core.commit.run(async () => {
        if (!this.isActive(id)) return;
        if (r.status === 'accepted') {
          t.state = 'running';
          if (r.by !== undefined && t.holder === undefined) t.holder = r.by;
          inflight.markRunning(t.channel);
          await repos.commit([repos.tasks.putOp(t, true)]);
          return;
        }
        await this.failInCommit(t, `${r.status}${r.reason !== undefined ? `: ${r.reason}` : ''}`);
      });
    });
  }

  /** Fails a task and writes `extra` with it. The caller holds the commit lock. */
  async failInCommit(t: TaskRecord, reason: string, extra: BatchOp[] = []): Promise<void> {
    const { sched, repos, inflight } = this.core;
    const now = this.core.clock();
    t.state = 'failed';
    t.reason = reason;
    t.finishedAt = now;
    const ops = [...repos.tasks.finishOps(t), ...extra];
    const fl = inflight.get(t.channel);
    const saved = snapshot(this.core);
    if (fl !== undefined && fl.task === t.id) {
      inflight.end(t.channel);
      const rec = await repos.channels.schedule(t.channel);
      if (rec !== undefined) ops.push(...(await endOps(this.core, t.channel, sched.failed(rec, fl, now), fl)), statsOp(this.core));
      else ops.push(...(await releaseOps(this.core, fl.hh)));
    }
    await commitScheduled(this.core, ops, saved, () => {
      if (fl !== undefined && fl.task === t.id && !inflight.isActive(t.channel, fl.task)) inflight.add(t.channel, fl);
    });
    this.core.counters.tasksFailed++;
    this.recentFailures.push(t);
    if (this.recentFailures.length > RECENT_FAILURES) this.recentFailures.splice(0, this.recentFailures.length - RECENT_FAILURES);
    this.core.log.info({ task: t.id, channel: t.channel, reason }, 'task failed');
  }

  /** Marks tasks past their deadline (plus grace) as failed; their channels become due. */
  async failOverdue(): Promise<number> {
    const due = this.core.inflight.overdue(this.core.clock(), this.graceMs, OVERDUE_PER_STEP);
    let n = 0;
    for (const [ch, id] of due) {
      await this.core.channelLocks.run(ch, async () => {
        const t = await this.active(id);
        await this.core.commit.run(async () => {
          if (!this.isActive(id)) return;
          const rec: TaskRecord = t ?? { id, channel: ch, host: '', issuedAt: 0, deadline: 0, round: 0, state: 'issued', parts: 0, pagesStored: 0, livePages: 0, revisited: 0, changed: 0, newPages: 0 };
          await this.failInCommit(rec, 'deadline passed without a final upload');
          this.core.counters.tasksOverdue++;
          if (rec.state === 'failed' && rec.holder !== undefined) this.onLost?.(rec);
          n++;
        });
      });
    }
    return n;
  }

  /** Runs the recrawl strategy's round if its trigger fired; persists the new state. IIR
   * runs from the window aggregates; ICR and CAF also need every channel's recent updates
   * at the round's time, read in one pass through the records; CAF steers on the
   * crawlers' load, observed just before the round. */
  async maybeReassign(): Promise<RoundReport | null> {
    const { sched, repos, inflight } = this.core;
    return this.core.commit.run(async () => {
      const now = this.core.clock();
      if (!sched.shouldReassign(now)) return null;
      let inputs;
      if (sched.needsScan) {
        const scan = new IcrScan(sched.state, Scheduler.minutes(now));
        await repos.channels.scanSchedules((id, rec) => scan.add(sched.view(rec, inflight.get(id))));
        inputs = scan.inputs(sched.stats);
      }
      sched.observeLoad(this.loadSource?.() ?? null);
      const r = sched.reassign(now, inputs);
      if (r === null) return null;
      this.rounds.push(r);
      if (this.rounds.length > ROUNDS_KEPT) this.rounds.splice(0, this.rounds.length - ROUNDS_KEPT);
      this.core.counters.rounds++;
      await repos.commit([repos.meta.recrawlOp(sched.meta()), statsOp(this.core), repos.meta.roundsOp(this.rounds)]);
      this.core.log.info({ round: sched.state.rounds, intervalsMin: r.intervals, load: sched.state.load }, 'recrawl intervals reassigned');
      return r;
    });
  }

  /** One scheduler step: overdue tasks, reassignment, then due channels → tasks. */
  async tick(limit = 1000): Promise<IssuedTask[]> {
    await this.failOverdue();
    await this.maybeReassign();
    return this.issueDue(limit);
  }
}
