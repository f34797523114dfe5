// What the operator reads about the recrawl: channels and tasks by state, and
// per priority group its size, interval and update quality — formula (5) of the
// paper, computed by src/recrawl/quality.ts (the simulator's implementation too).
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

export class ReportingService {
  constructor(
    private readonly core: ServiceCore,
    private readonly tasks: TaskService,
  ) {}

  /** Tasks by state: queued = channels due now, not yet issued. */
  taskSummary(): TaskSummary {
    const { sched } = this.core;
    const f = sched.countInFlight();
    return { queued: sched.countDue(this.core.clock()), issued: f.issued, running: f.running, failedRecent: [...this.tasks.recentFailures].reverse() };
  }

  /** Formula (5) over every channel: λ_actual from the channel's recent updates
   * (src/recrawl's channelHistory), λ_expected = 1 / its change interval. */
  quality(): QualityReport {
    const st = this.core.sched.state;
    const now = this.core.clock() / MINUTE;
    const q = new UpdateQualitySum(st.groups.length);
    for (const c of st.channels) {
      const rate = c.updateTimes.length === 0 ? null : channelHistory(c, now, st.groups[c.group]!.interval).rate;
      q.add(c.group, rate, c.changeInterval);
    }
    return q.result();
  }

  /** Per group: size, interval, update quality. */
  groups(quality: QualityReport = this.quality()): GroupReport[] {
    return this.core.sched.state.groups.map((g, i) => {
      const q = quality.groups[i]!;
      return { group: i, channels: q.channels, updated: q.measured, intervalMinutes: g.interval, initialIntervalMinutes: g.initialInterval, updateQuality: q.quality, weight: q.weight };
    });
  }
}
