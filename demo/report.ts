// The demo's final report: tasks, the manager's own update quality per group
// (both from its HTTP API), and true freshness and age per group against the
// test web's ground truth.
import type { ChannelView, GroupsView, StatusView } from './api.js';
import type { ChurnStats } from './churn.js';
import type { DemoFlags } from './flags.js';
import type { DemoClock, GroupTruth, TruthSnapshot } from './world.js';

/** A channel the demo added: its site, the group it started in, its true change interval. */
export interface DemoChannel {
  id: string;
  site: string;
  startGroup: number;
  trueChangeIntervalSimMin: number;
}

/** The group intervals at the start and after each reassignment round, simulated. */
export interface IntervalStep {
  /** Simulated hours since the start (0 for the initial intervals). */
  atSimHours: number;
  intervalsSimMinutes: number[];
  /** Per group: the round's success rate (updates / tasks), null without tasks. */
  successRates: (number | null)[];
}

/** Where the estimator put a channel, against its site's true change rate. */
export interface ChannelMove {
  site: string;
  trueChangeIntervalSimMinutes: number;
  /** The manager's estimate (its change interval), simulated minutes; null: no change rate yet. */
  estimatedChangeIntervalSimMinutes: number | null;
  startGroup: number;
  endGroup: number;
}

export interface DemoGroupReport {
  group: number;
  channels: number;
  /** The group's recrawl interval now, simulated minutes. */
  intervalSimMinutes: number;
  /** Paper eq. 5 (λ actual / λ expected), the manager's figure; null before any update. */
  updateQuality: number | null;
  /** Time-averaged over the run (one sample per real second). */
  coverage: number | null;
  freshness: number | null;
  meanAgeSimMinutes: number | null;
  /** At the end of the run. */
  final: { pages: number; stored: number; freshness: number | null; meanAgeSimMinutes: number | null };
}

export interface DemoReport {
  config: { volunteers: number; speed: number; durationSeconds: number; realSeconds: number; simulatedHours: number; seed: number; sites: number; churn: boolean };
  tasks: { issued: number; completed: number; failed: number; overdue: number; inFlight: number };
  uploads: { applied: number; duplicate: number; refused: number };
  pages: { versionsStored: number; groupMoves: number; rounds: number };
  /** Initial group intervals, then those of each reassignment round (the last rounds the manager keeps). */
  intervals: IntervalStep[];
  channels: ChannelMove[];
  groups: DemoGroupReport[];
  updateQuality: { weighted: number | null; unweighted: number | null };
  churn: (ChurnStats & { completedPerQuarter: number[]; volunteersOnlineMin: number; volunteersOnlineMax: number }) | null;
}

const ratio = (a: number, b: number): number | null => (b > 0 ? a / b : null);

export function buildReport(o: {
  flags: DemoFlags;
  status: StatusView;
  groups: GroupsView;
  acc: Map<number, GroupTruth>;
  last: TruthSnapshot | null;
  timeline: { realS: number; succeeded: number; online: number }[];
  churn: ChurnStats | null;
  realSeconds: number;
  clock: DemoClock;
  channels: DemoChannel[];
  /** The channels at the end (null: deleted from the dashboard meanwhile). */
  views: (ChannelView | null)[];
}): DemoReport {
  const c = o.status.counters;
  const speed = o.flags.speed;
  const intervals: IntervalStep[] = [
    { atSimHours: 0, intervalsSimMinutes: o.groups.groups.map((g) => g.initialIntervalMinutes * speed), successRates: o.groups.groups.map(() => null) },
    ...o.groups.recentRounds.map((r) => ({ atSimHours: o.clock.simSinceStart(r.at) / 3_600_000, intervalsSimMinutes: r.intervals.map((v) => v * speed), successRates: r.successRates })),
  ];
  const channels: ChannelMove[] = o.channels.flatMap((ch, i) => {
    const v = o.views[i];
    if (v === null || v === undefined) return [];
    const estimated = v.changeRate === null ? null : v.changeInterval * speed;
    return [{ site: ch.site, trueChangeIntervalSimMinutes: ch.trueChangeIntervalSimMin, estimatedChangeIntervalSimMinutes: estimated, startGroup: ch.startGroup, endGroup: v.group }];
  });
  const t = o.status.tasks;
  const groups: DemoGroupReport[] = o.groups.groups.map((g) => {
    const a = o.acc.get(g.group);
    const f = o.last?.groups.find((x) => x.group === g.group);
    return {
      group: g.group,
      channels: g.channels,
      intervalSimMinutes: g.intervalMinutes * o.flags.speed,
      updateQuality: g.updateQuality,
      coverage: a ? ratio(a.stored, a.pages) : null,
      freshness: a ? ratio(a.fresh, a.stored) : null,
      meanAgeSimMinutes: a ? ratio(a.ageSumMin, a.stored) : null,
      final: { pages: f?.pages ?? 0, stored: f?.stored ?? 0, freshness: f ? ratio(f.fresh, f.stored) : null, meanAgeSimMinutes: f ? ratio(f.ageSumMin, f.stored) : null },
    };
  });
  let churn: DemoReport['churn'] = null;
  if (o.churn) {
    const tl = o.timeline;
    const q: number[] = [];
    for (let k = 1; k <= 4; k++) {
      const end = tl[Math.max(0, Math.ceil((tl.length * k) / 4) - 1)]?.succeeded ?? 0;
      const start = k === 1 ? 0 : (tl[Math.max(0, Math.ceil((tl.length * (k - 1)) / 4) - 1)]?.succeeded ?? 0);
      q.push(end - start);
    }
    churn = { ...o.churn, completedPerQuarter: q, volunteersOnlineMin: Math.min(...tl.map((x) => x.online)), volunteersOnlineMax: Math.max(...tl.map((x) => x.online)) };
  }
  return {
    config: { volunteers: o.flags.volunteers, speed: o.flags.speed, durationSeconds: o.flags.duration, realSeconds: o.realSeconds, simulatedHours: (o.realSeconds * o.flags.speed) / 3600, seed: o.flags.seed, sites: o.flags.sites, churn: o.flags.churn },
    tasks: { issued: c.tasksIssued, completed: c.tasksSucceeded, failed: c.tasksFailed, overdue: c.tasksOverdue, inFlight: t.issued + t.running },
    uploads: { applied: c.uploadsApplied, duplicate: c.uploadsDuplicate, refused: c.uploadsRefused },
    pages: { versionsStored: c.pagesStored, groupMoves: c.groupMoves, rounds: c.rounds },
    intervals,
    channels,
    groups,
    updateQuality: o.groups.updateQuality,
    churn,
  };
}

const f2 = (x: number | null): string => (x === null ? '-' : x.toFixed(2));
const pct = (x: number | null): string => (x === null ? '-' : `${(x * 100).toFixed(0)} %`);
const mins = (x: number | null): string => (x === null ? '-' : x < 120 ? `${x.toFixed(0)} min` : `${(x / 60).toFixed(1)} h`);

export function formatReport(r: DemoReport): string {
  const L: string[] = [];
  const cf = r.config;
  L.push('', `=== volcrawl demo report: ${cf.realSeconds.toFixed(0)} s real = ${cf.simulatedHours.toFixed(1)} h simulated (speed ${cf.speed}×), ${cf.sites} sites, ${cf.volunteers} volunteers, seed ${cf.seed}${cf.churn ? ', churn' : ''}`);
  L.push(`tasks: issued ${r.tasks.issued}, completed ${r.tasks.completed}, failed ${r.tasks.failed} (of which overdue ${r.tasks.overdue}), in flight at the end ${r.tasks.inFlight}`);
  L.push(`uploads: applied ${r.uploads.applied}, duplicate ${r.uploads.duplicate}, refused ${r.uploads.refused}; page versions stored ${r.pages.versionsStored}; estimator group moves ${r.pages.groupMoves}; recrawl rounds ${r.pages.rounds}`);
  L.push('', `recrawl intervals per group (simulated; ${r.pages.rounds} reassignment rounds, ${r.intervals.length - 1 < r.pages.rounds ? `the last ${r.intervals.length - 1} shown` : 'all shown'}):`);
  for (const step of r.intervals) {
    const when = step.atSimHours === 0 ? 'initial      ' : `+${step.atSimHours.toFixed(1).padStart(5)} h sim `;
    const rates = step.successRates.some((x) => x !== null) ? `   (success rate ${step.successRates.map((x) => (x === null ? '-' : x.toFixed(2))).join(' ')})` : '';
    L.push(`  ${when} ${step.intervalsSimMinutes.map((v) => mins(v).padStart(8)).join('')}${rates}`);
  }
  const moved = r.channels.filter((c) => c.endGroup !== c.startGroup).length;
  L.push('', `estimator: ${moved} of ${r.channels.length} channels moved between groups (${r.pages.groupMoves} moves in all)`);
  L.push('  site         true change interval  estimated   group');
  for (const c of r.channels) {
    L.push(`  ${c.site.padEnd(13)}${mins(c.trueChangeIntervalSimMinutes).padEnd(22)}${mins(c.estimatedChangeIntervalSimMinutes).padEnd(12)}${c.startGroup === c.endGroup ? String(c.endGroup) : `${c.startGroup} → ${c.endGroup}`}`);
  }
  L.push('', 'group  channels  interval (sim)  update quality  coverage  true freshness  mean age (sim)  | at the end: fresh  age');
  for (const g of r.groups) {
    L.push(
      `${String(g.group).padEnd(7)}${String(g.channels).padEnd(10)}${mins(g.intervalSimMinutes).padEnd(16)}${f2(g.updateQuality).padEnd(16)}${pct(g.coverage).padEnd(10)}${f2(g.freshness).padEnd(16)}${mins(g.meanAgeSimMinutes).padEnd(16)}|              ${f2(g.final.freshness).padEnd(7)}${mins(g.final.meanAgeSimMinutes)}`,
    );
  }
  L.push(`weighted update quality (paper eq. 5: mean over updated channels of 2^(K-1-g) × actual/expected rate, so up to 16× the unweighted): ${f2(r.updateQuality.weighted)}; unweighted ${f2(r.updateQuality.unweighted)}`);
  L.push('freshness = share of stored pages whose stored copy is the current version; age = time since the stored copy went stale (0 if fresh); both time-averaged, from the test web\'s ground truth');
  if (r.churn) {
    const c = r.churn;
    L.push(`churn: ${c.graceful + c.silent} departures (${c.graceful} graceful SIGTERM, ${c.silent} silent SIGKILL), ${c.rejoins} rejoins; volunteers online ${c.volunteersOnlineMin}..${c.volunteersOnlineMax}; tasks completed per quarter of the run: ${c.completedPerQuarter.join(', ')}`);
  }
  L.push('');
  return L.join('\n');
}
