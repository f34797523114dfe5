// Formula (5)'s best score per strategy from the published task counts (facts 1 and 2 of
// sim/audit.ts): the run's channel-minutes N·T from FIXED, R × θ per rank, the bound with
// every task succeeding, and the same bound under the other readings of (5) and of T.
// Apart because these bounds are the yardstick every verdict of the audit is taken against.
import type { PaperScenario, PaperStrategy, PaperTaskTable } from './paper-tables.js';
import { PAPER_SETUP, PAPER_STRATEGIES, TABLE_1 } from './paper-tables.js';
import { qualityTable, side, taskTable, theta, weight, type BoundSide } from './audit-basis.js';

// ---------------------------------------------------------------- N·T

export interface MinutesTerm {
  rank: number;
  interval: number;
  fixedTasks: number;
  /** FIXED tasks × θ = this rank's channels × steps. */
  minutes: number;
}

export interface ChannelMinutes {
  terms: MinutesTerm[];
  /** Σ FIXED tasks × θ = N·T (channel-minutes of the run). */
  total: number;
  channels: number;
  /** N·T / channels: the run length the FIXED counts imply. */
  impliedSteps: number;
  /** N·T / steps of the text: the channel count the FIXED counts imply at 90000 steps. */
  impliedChannels: number;
  textSteps: number;
  /** channels × text steps. */
  textTotal: number;
  /** Channels per rank implied at the text's channel count: N × minutes / total. */
  channelsByRank: number[];
}

/** N·T from Table 1's FIXED row (Table 3's is identical). */
export function channelMinutes(t: PaperTaskTable = TABLE_1): ChannelMinutes {
  const terms = t.rows.map((r) => ({
    rank: r.rank,
    interval: theta(r.rank),
    fixedTasks: r.tasks.fixed,
    minutes: r.tasks.fixed * theta(r.rank),
  }));
  const total = terms.reduce((a, x) => a + x.minutes, 0);
  const N = PAPER_SETUP.channels;
  return {
    terms,
    total,
    channels: N,
    impliedSteps: total / N,
    impliedChannels: total / PAPER_SETUP.steps,
    textSteps: PAPER_SETUP.steps,
    textTotal: N * PAPER_SETUP.steps,
    channelsByRank: terms.map((x) => (N * x.minutes) / total),
  };
}

// ---------------------------------------------------------------- formula (5)

export interface WeightTerm {
  rank: number;
  weight: number;
  interval: number;
  product: number;
}

/** R × θ per rank: 16 × 60 = 8 × 120 = … = 960, so weighted (5) counts updates. */
export function weightIntervalProducts(): WeightTerm[] {
  return TABLE_1.rows.map((r) => ({ rank: r.rank, weight: weight(r.rank), interval: theta(r.rank), product: weight(r.rank) * theta(r.rank) }));
}

export interface RankTerm {
  rank: number;
  interval: number;
  weight: number;
  tasks: number;
  /** R × θ × tasks: this rank's share of the weighted sum at 100% success. */
  weightedMinutes: number;
  /** θ × tasks: this rank's share of the unweighted sum at 100% success. */
  minutes: number;
}

export interface QualityBound {
  scenario: PaperScenario;
  strategy: PaperStrategy;
  taskTable: 1 | 3;
  qualityTable: 2 | 4;
  terms: RankTerm[];
  /** Σ of the rank rows (not the Total row). */
  tasks: number;
  weightedMinutes: number;
  minutes: number;
  channelMinutes: number;
  weighted: BoundSide;
  unweighted: BoundSide;
  /** Updates the published weighted score stands for: published × N·T / (R × θ), valid
   * because R × θ is the same for every rank. */
  updatesForPublished: number;
}

/** Formula (5)'s best score per strategy from its published task counts (reading: N = channels, T from FIXED). */
export function qualityBound(scenario: PaperScenario, strategy: PaperStrategy, nt = channelMinutes().total): QualityBound {
  const t = taskTable(scenario);
  const q = qualityTable(scenario);
  const terms = t.rows.map((r) => {
    const tasks = r.tasks[strategy];
    return {
      rank: r.rank,
      interval: theta(r.rank),
      weight: weight(r.rank),
      tasks,
      weightedMinutes: weight(r.rank) * theta(r.rank) * tasks,
      minutes: theta(r.rank) * tasks,
    };
  });
  const sum = (f: (x: RankTerm) => number) => terms.reduce((a, x) => a + f(x), 0);
  const weightedMinutes = sum((x) => x.weightedMinutes);
  const minutes = sum((x) => x.minutes);
  const rt = terms[0]!.weight * terms[0]!.interval;
  return {
    scenario,
    strategy,
    taskTable: t.table,
    qualityTable: q.table,
    terms,
    tasks: sum((x) => x.tasks),
    weightedMinutes,
    minutes,
    channelMinutes: nt,
    weighted: side(q.weighted[strategy], weightedMinutes / nt),
    unweighted: side(q.unweighted[strategy], minutes / nt),
    updatesForPublished: (q.weighted[strategy] * nt) / rt,
  };
}

export function allQualityBounds(): QualityBound[] {
  const nt = channelMinutes().total;
  return (['rec', 'ruc'] as const).flatMap((sc) => PAPER_STRATEGIES.map((s) => qualityBound(sc, s, nt)));
}

// ---------------------------------------------------------------- other readings

export type ReadingId = 'channels' | 'text-steps' | 'per-group';

export const READINGS: Readonly<Record<ReadingId, string>> = {
  channels: 'N = 16000 channels, T from FIXED (N·T = Σ FIXED tasks × θ); the audit\'s main reading',
  'text-steps': 'N = 16000 channels, T = 90000 steps as §4 states (N·T = 1440E6)',
  'per-group': 'i in (5) runs over the 5 PGPs (R_i, λ_i per group), N = 5: each rank\'s ratio ≤ its tasks / FIXED tasks',
};

export interface ReadingBound {
  reading: ReadingId;
  scenario: PaperScenario;
  strategy: PaperStrategy;
  weighted: BoundSide;
  unweighted: BoundSide;
}

/** The same bound under each reading of formula (5) and of the run length. */
export function readingBounds(): ReadingBound[] {
  const cm = channelMinutes();
  const out: ReadingBound[] = [];
  for (const sc of ['rec', 'ruc'] as const) {
    const t = taskTable(sc);
    const q = qualityTable(sc);
    for (const s of PAPER_STRATEGIES) {
      for (const reading of ['channels', 'text-steps'] as const) {
        const b = qualityBound(sc, s, reading === 'channels' ? cm.total : cm.textTotal);
        out.push({ reading, scenario: sc, strategy: s, weighted: b.weighted, unweighted: b.unweighted });
      }
      // Per group: λ_actual/λ_expected of rank g ≤ tasks_g / (N_g T / θ_g) = tasks_g / FIXED tasks_g.
      const k = t.rows.length;
      const w = t.rows.reduce((a, r) => a + (weight(r.rank) * r.tasks[s]) / r.tasks.fixed, 0) / k;
      const u = t.rows.reduce((a, r) => a + r.tasks[s] / r.tasks.fixed, 0) / k;
      out.push({ reading: 'per-group', scenario: sc, strategy: s, weighted: side(q.weighted[s], w), unweighted: side(q.unweighted[s], u) });
    }
  }
  return out;
}
