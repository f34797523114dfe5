// The demo's final report: tasks, the manager's own update quality per group
// (both from its HTTP API), and true freshness and age per group against the
// test web's ground truth.
import type { GroupsView, StatusView } from './api.js';
import type { ChurnStats } from './churn.js';
import type { DemoFlags } from './flags.js';
import type { GroupTruth, TruthSnapshot } from './world.js';

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
  groups: DemoGroupReport[];
  updateQuality: { weighted: number | null; unweighted: number | null };
  churn: (ChurnStats & { completedPerQuarter: number[]; volunteersOnlineMin: number; volunteersOnlineMax: number }) | null;
}

const ratio = (a: number, b: number): number | null => (b > 0 ? a / b : null);

export function buildReport(o: { flags: DemoFlags; status: StatusView; groups: GroupsView; acc: Map<number, GroupTruth>; last: TruthSnapshot | null; timeline: { realS: number; succeeded: number; online: number }[]; churn: ChurnStats | null; realSeconds: number }): DemoReport {
  const c = o.status.counters;
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
  L.push(`uploads: applied ${r.uploads.applied}, duplicate ${r.uploads.duplicate}, refused ${r.uploads.refused}; page versions stored ${r.pages.versionsStored}; estimator group moves ${r.pages.groupMoves}; IIR rounds ${r.pages.rounds}`);
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
