// What the operator reads about the recrawl: channels and tasks by state, and
// per priority group its size, interval and update quality — formula (5) of the
// paper, computed by src/recrawl/quality.ts (the simulator's implementation too).
//
// Group sizes come from the window aggregates and tasks in flight from memory. The
// queued count (channels due now) and update quality depend on the time and on
// every channel, so they take a pass over the due index or the channel records;
// such a figure is kept and passed again only when the database changed since and,
// for a pass that took more than 50 ms, when it is older than 20 × that pass (a
// 3-second pass at millions of channels: at most every minute, ~5 % of a core).
import { channelHistory } from '../../recrawl/index.js';
import { UpdateQualitySum, type QualityReport } from '../../recrawl/quality.js';
import type { TaskRecord } from '../domain/records.js';
import { MINUTE } from '../domain/scheduler.js';
import type { ServiceCore } from './core.js';
import type { TaskService } from './tasks.js';

export interface GroupReport {
  group: number;
  channels: number;
  /** Channels with at least one update (the group's N in formula (5)). */
  updated: number;
  intervalMinutes: number;
  initialIntervalMinutes: number;
  /** Mean over the updated channels of λ_actual / λ_expected; null before any update. */
  updateQuality: number | null;
  /** R_g of formula (5). */
  weight: number;
}

export interface TaskSummary {
  /** Channels due now, not yet issued. */
  queued: number;
  issued: number;
  running: number;
  /** Most recent first. */
  failedRecent: TaskRecord[];
}

/** A figure from a pass over the database, kept while it is fresh enough (see above). */
class PassCache<T> {
  private value: T | undefined;
  private writes = -1;
  private at = 0;
  private took = 0;
  private pending: Promise<T> | null = null;

  constructor(
    private readonly pass: () => Promise<T>,
    private readonly writes$: () => number,
  ) {}

  async get(): Promise<T> {
    const fresh = this.value !== undefined && (this.writes === this.writes$() || (this.took > 50 && performance.now() - this.at < 20 * this.took));
    if (fresh) return this.value!;
    if (this.pending === null) {
      const writes = this.writes$();
      const t0 = performance.now();
      this.pending = this.pass().then(
        (v) => {
          this.value = v;
          this.writes = writes;
          this.at = performance.now();
          this.took = this.at - t0;
          this.pending = null;
          return v;
        },
        (err: unknown) => {
          this.pending = null;
          throw err;
        },
      );
    }
    return this.pending;
  }
}

export class ReportingService {
  private readonly queued: PassCache<number>;
  private readonly qualityPass: PassCache<QualityReport>;

  constructor(
    private readonly core: ServiceCore,
    private readonly tasks: TaskService,
  ) {
    const writes = () => core.repos.writes;
    this.queued = new PassCache(() => this.countDue(), writes);
    this.qualityPass = new PassCache(() => this.qualityNow(), writes);
  }

  /** Tasks by state: queued = channels due now, not yet issued. */
  async taskSummary(): Promise<TaskSummary> {
    const f = this.core.inflight.counts();
    return { queued: await this.queued.get(), issued: f.issued, running: f.running, failedRecent: [...this.tasks.recentFailures].reverse() };
  }

  /** Channels due now (a pass over the due index, parked channels included). */
  async countDue(now = this.core.clock()): Promise<number> {
    let n = 0;
    await this.tasks.walkDue(now, 1024, false, (s) => {
      if (s.kind === 'due') n++;
    });
    await this.core.repos.due.eachParked((e) => {
      if (this.core.sched.dueOf(e) <= now) n++;
    });
    return n;
  }

  /** Up to `limit` channels due now, in issue order (parked ones after). */
  async listDue(limit: number, now = this.core.clock()): Promise<string[]> {
    const out: string[] = [];
    if (limit <= 0) return out;
    await this.tasks.walkDue(now, Math.min(1024, Math.max(32, limit)), false, (s) => {
      if (s.kind !== 'due') return;
      out.push(s.e.id);
      return out.length >= limit ? 'stop' : undefined;
    });
    if (out.length < limit) {
      const parked: string[] = [];
      await this.core.repos.due.eachParked((e) => {
        if (this.core.sched.dueOf(e) <= now) parked.push(e.id);
      });
      out.push(...parked.slice(0, limit - out.length));
    }
    return out;
  }

  /** Formula (5) over every channel: λ_actual from the channel's recent updates
   * (src/recrawl's channelHistory), λ_expected = 1 / its change interval. */
  quality(): Promise<QualityReport> {
    return this.qualityPass.get();
  }

  private async qualityNow(): Promise<QualityReport> {
    const { sched, repos } = this.core;
    const st = sched.state;
    const now = this.core.clock() / MINUTE;
    const q = new UpdateQualitySum(st.groups.length);
    await repos.channels.scanSchedules((_id, rec) => {
      const c = sched.view(rec);
      const rate = c.updateTimes.length === 0 ? null : channelHistory(c, now, st.groups[c.group]!.interval).rate;
      q.add(c.group, rate, c.changeInterval);
    });
    return q.result();
  }

  /** Per group: size, interval, update quality. */
  async groups(quality?: QualityReport): Promise<GroupReport[]> {
    const q5 = quality ?? (await this.quality());
    const { sched } = this.core;
    return sched.state.groups.map((g, i) => {
      const q = q5.groups[i]!;
      return { group: i, channels: sched.stats[i]!.members, updated: q.measured, intervalMinutes: g.interval, initialIntervalMinutes: g.initialInterval, updateQuality: q.quality, weight: q.weight };
    });
  }
}
