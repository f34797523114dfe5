// Tasks from issue to end: due channels become tasks (persisted before they are
// handed to the dispatcher), the dispatcher's answer is recorded, tasks past
// their deadline fail, and the recrawl strategy's reassignment runs when its
// trigger fires. The network side plugs in through `dispatch`.
import type { Task } from '../../crawler/task.js';
import type { WireCoord } from '../../dht/signing.js';
import type { RoundReport } from '../../recrawl/index.js';
import type { TaskInputs } from '../data/channels.js';
import type { BatchOp } from '../data/repositories.js';
import type { Channel } from '../domain/channel.js';
import { HostGate } from '../domain/host-gate.js';
import type { TaskRecord } from '../domain/records.js';
import { MINUTE } from '../domain/scheduler.js';
import { buildTask, channelOfTask, taskId } from '../domain/task-builder.js';
import type { ServiceCore } from './core.js';

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
}

/** Failed tasks kept for the API, and reassignment rounds kept (in the database too). */
const RECENT_FAILURES = 200;
const ROUNDS_KEPT = 50;
/** Overdue tasks failed per step. */
const OVERDUE_PER_STEP = 10_000;

export class TaskService {
  /** Set by the network side (network.ts); null: issued tasks wait for their deadline. */
  dispatch: Dispatcher | null = null;
  /** Told of every task a crawler accepted and never finished (the trust service). */
  onLost: ((t: TaskRecord) => void) | null = null;
  readonly recentFailures: TaskRecord[] = [];
  private readonly dispatching = new Set<Promise<void>>();
  /** At most one task in flight per host (politeness across channels of one host). */
  private readonly hostGate = new HostGate((id) => this.isActive(id));
  private seq = 0;

  constructor(
    private readonly core: ServiceCore,
    private readonly opts: TaskServiceOptions,
    /** The last reassignment rounds, oldest first. */
    readonly rounds: RoundReport[],
  ) {}

  /** Restores the tasks in flight (startup); returns how many there were. */
  async restore(): Promise<number> {
    const { sched } = this.core;
    return this.core.repos.tasks.scanActive((t) => {
      if (!sched.has(t.channel)) return;
      sched.restoreInFlight(t.channel, t.id, t.issuedAt, t.round, t.deadline, t.state === 'running');
      this.hostGate.hold(t.host, t.id);
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

  private timeout(channelId: string): number {
    const lo = this.opts.taskTimeoutMinMs ?? 10 * MINUTE;
    const hi = this.opts.taskTimeoutMaxMs ?? 6 * 60 * MINUTE;
    // Whole milliseconds: the crawler's task schema wants an integer deadline, and
    // IIR/ICR intervals (minutes) are fractional.
    return Math.round(Math.min(hi, Math.max(lo, this.core.sched.intervalMs(channelId))));
  }

  /** Turns up to `limit` due channels into tasks, persisted before they are returned
   * (and, when a dispatcher is set, handed to it). */
  async issueDue(limit = 1000): Promise<IssuedTask[]> {
    const issued = await this.core.commit.run(() => this.issueLocked(limit));
    if (this.dispatch !== null) for (const t of issued) this.startDispatch(this.dispatch, t);
    return issued;
  }

  private async issueLocked(limit: number): Promise<IssuedTask[]> {
    const { sched, repos } = this.core;
    const now = this.core.clock();
    const ids = sched.due(now, limit);
    if (ids.length === 0) return [];
    const inputs = await repos.channels.taskInputs(ids, (id) => sched.optionalRecords(id));
    // One task per host: a channel whose host is being crawled (or already got a task in
    // this batch) stays due; the round-robin scan comes back to it.
    const taken = new Set<string>();
    const ready: (TaskInputs & { channel: Channel })[] = [];
    for (const x of inputs) {
      const ch = x.channel;
      if (ch === undefined || taken.has(ch.host) || this.hostGate.busy(ch.host)) continue;
      taken.add(ch.host);
      ready.push({ ...x, channel: ch });
    }
    const hosts = [...taken];
    const coords = await repos.hosts.coords(hosts);
    const coordOf = new Map<string, WireCoord>();
    hosts.forEach((h, i) => coords[i] !== undefined && coordOf.set(h, coords[i]!));
    const ops: BatchOp[] = [];
    const out: IssuedTask[] = [];
    for (const { channel: ch, known, interSeeds, interDigests } of ready) {
      const id = taskId(ch.id, now, this.seq++);
      const deadline = now + this.timeout(ch.id);
      const task = buildTask(ch, id, deadline, known, interSeeds, interDigests);
      if (this.opts.archiveExchanges === true) task.archive = 'full';
      const rec: TaskRecord = { id, channel: ch.id, host: ch.host, issuedAt: now, deadline, round: sched.state.rounds, state: 'issued', parts: 0, pagesStored: 0, livePages: 0, revisited: 0, changed: 0, newPages: 0 };
      sched.markIssued(ch.id, id, now, deadline);
      this.hostGate.hold(ch.host, id);
      // While a task is active only its record is written: on restart it restores the
      // channel's last-issue time, in-flight id and submit count (Scheduler.restoreInFlight).
      ops.push(repos.tasks.putOp(rec, true));
      const hc = coordOf.get(ch.host);
      out.push(hc !== undefined ? { task, channel: ch, hostCoord: hc } : { task, channel: ch });
    }
    await repos.commit(ops);
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
    const ch = channelOfTask(id);
    return this.core.sched.has(ch) && this.core.sched.inFlight(ch) === id;
  }

  /** The record of a task in flight, or undefined. */
  async active(id: string): Promise<TaskRecord | undefined> {
    if (!this.isActive(id)) return undefined;
    return this.core.repos.tasks.active(id);
  }

  /** Records of tasks in flight (at most `limit`), optionally only issued or only running. */
  async activeList(limit: number, state?: 'issued' | 'running'): Promise<TaskRecord[]> {
    return this.core.repos.tasks.activeMany(this.core.sched.inFlightTasks(limit, state).map(([, t]) => t));
  }

  /** Records where a task went; a task no crawler took fails at once. Serialised
   * with the channel's uploads so a fast upload and this bookkeeping never race. */
  async onDispatched(id: string, r: DispatchResult): Promise<void> {
    const { sched, repos } = this.core;
    await this.core.channelLocks.run(channelOfTask(id), async () => {
      const t = await this.active(id);
      if (t === undefined || t.state !== 'issued') return;
      await this.core.commit.run(async () => {
        if (!this.isActive(id)) return;
        if (r.status === 'accepted') {
          t.state = 'running';
          if (r.by !== undefined && t.holder === undefined) t.holder = r.by;
          sched.setRunning(t.channel, id);
          await repos.commit([repos.tasks.putOp(t, true)]);
          return;
        }
        await this.failInCommit(t, `${r.status}${r.reason !== undefined ? `: ${r.reason}` : ''}`);
      });
    });
  }

  /** Fails a task and writes `extra` with it. The caller holds the commit lock. */
  async failInCommit(t: TaskRecord, reason: string, extra: BatchOp[] = []): Promise<void> {
    const { sched, repos } = this.core;
    const now = this.core.clock();
    t.state = 'failed';
    t.reason = reason;
    t.finishedAt = now;
    const ops = [...repos.tasks.finishOps(t), ...extra];
    if (sched.has(t.channel) && sched.markFailure(t.channel, t.id, now)) ops.push(repos.channels.scheduleOp(t.channel, sched.record(t.channel)));
    await repos.commit(ops);
    this.core.counters.tasksFailed++;
    this.recentFailures.push(t);
    if (this.recentFailures.length > RECENT_FAILURES) this.recentFailures.splice(0, this.recentFailures.length - RECENT_FAILURES);
    this.core.log.info({ task: t.id, channel: t.channel, reason }, 'task failed');
  }

  /** Marks tasks past their deadline (plus grace) as failed; their channels become due. */
  async failOverdue(): Promise<number> {
    const due = this.core.sched.overdue(this.core.clock(), this.graceMs, OVERDUE_PER_STEP);
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

  /** Runs the recrawl strategy's reassignment if its trigger fired; persists the new state. */
  async maybeReassign(): Promise<RoundReport | null> {
    const { sched, repos } = this.core;
    return this.core.commit.run(async () => {
      const r = sched.maybeReassign(this.core.clock());
      if (r === null) return null;
      this.rounds.push(r);
      if (this.rounds.length > ROUNDS_KEPT) this.rounds.splice(0, this.rounds.length - ROUNDS_KEPT);
      this.core.counters.rounds++;
      await repos.commit([repos.meta.recrawlOp(sched.meta()), repos.meta.roundsOp(this.rounds)]);
      this.core.log.info({ round: sched.state.rounds, intervalsMin: r.intervals }, 'recrawl intervals reassigned');
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
