// The interval columns of Tables 1 and 3 held to the task counts beside them: ICR's
// neighbouring-rank ratios against ω, what the "Mean" row averages, and the mean interval
// each published count implies. Apart because these read the intervals, not formula (5).
import type { PaperStrategy } from './paper-tables.js';
import { PAPER_STRATEGIES, TABLE_1, TABLE_3 } from './paper-tables.js';
import { TASK_ROUNDING, theta } from './audit-basis.js';

// ---------------------------------------------------------------- ICR's interval ratios

export interface RatioPair {
  upper: number;
  lower: number;
  upperInterval: number;
  lowerInterval: number;
  ratio: number;
  /** The ratio's range with each printed interval anywhere in its ±0.5 rounding band. */
  min: number;
  max: number;
  containsOmega: boolean;
}

export interface RatioCheck {
  table: 1 | 3;
  strategy: PaperStrategy;
  /** ω between neighbouring ranks' initial intervals (FIXED's column): 2 for every pair. */
  omega: number;
  pairs: RatioPair[];
  consistent: boolean;
}

/** ICR (§3.2) sets rank k's interval to θ·Δt·Πω: with one θ every neighbouring ratio is ω
 * at every instant, so any average of the intervals keeps it (checkPriorities leaves a
 * ratio of 2 alone for σ ≤ 2 ≤ μ, and would force every ratio to μ if μ < 2). */
export function icrRatioChecks(): RatioCheck[] {
  return [TABLE_1, TABLE_3].map((t) => {
    const omegas = t.rows.slice(1).map((r, i) => r.interval.fixed / t.rows[i]!.interval.fixed);
    const omega = omegas[0]!;
    const pairs = t.rows.slice(1).map((lo, i) => {
      const up = t.rows[i]!;
      const a = lo.interval.icr;
      const b = up.interval.icr;
      const min = (a - 0.5) / (b + 0.5);
      const max = (a + 0.5) / (b - 0.5);
      return { upper: up.rank, lower: lo.rank, upperInterval: b, lowerInterval: a, ratio: a / b, min, max, containsOmega: min <= omega && omega <= max };
    });
    return { table: t.table, strategy: 'icr' as const, omega, pairs, consistent: omegas.every((o) => o === omega) && pairs.every((p) => p.containsOmega) };
  });
}

// ---------------------------------------------------------------- the "Mean" row

export interface MeanRowCheck {
  table: 1 | 3;
  strategy: PaperStrategy;
  published: number;
  plainMean: number;
  /** Σ channels_g × interval_g / N with channels_g ∝ FIXED tasks_g × θ_g. */
  channelWeightedMean: number;
  /** The Mean row repeats the rank-4 row. */
  equalsRank4: boolean;
  /** Which reading the published value matches within 1%. */
  matches: 'plain' | 'channel-weighted' | 'rank 4 row' | 'neither';
}

export function meanRowChecks(): MeanRowCheck[] {
  const out: MeanRowCheck[] = [];
  for (const t of [TABLE_1, TABLE_3]) {
    const share = t.rows.map((r) => r.tasks.fixed * theta(r.rank));
    const totalShare = share.reduce((a, b) => a + b, 0);
    const row4 = t.rows.find((r) => r.rank === 4)!;
    const all4 = PAPER_STRATEGIES.every((s) => t.meanInterval[s] === row4.interval[s]);
    for (const s of PAPER_STRATEGIES) {
      const ivs = t.rows.map((r) => r.interval[s]);
      const plainMean = ivs.reduce((a, b) => a + b, 0) / ivs.length;
      const channelWeightedMean = ivs.reduce((a, v, i) => a + share[i]! * v, 0) / totalShare;
      const p = t.meanInterval[s];
      const near = (x: number) => Math.abs(p - x) <= 0.01 * x;
      const matches = all4 ? 'rank 4 row' : near(channelWeightedMean) ? 'channel-weighted' : near(plainMean) ? 'plain' : 'neither';
      out.push({ table: t.table, strategy: s, published: p, plainMean, channelWeightedMean, equalsRank4: all4, matches });
    }
  }
  return out;
}

// ---------------------------------------------------------------- intervals vs task counts

export interface IntervalCheck {
  table: 1 | 3;
  strategy: PaperStrategy;
  rank: number;
  published: number;
  /** channels_g × T / tasks = FIXED tasks × θ / tasks: the mean interval the count implies. */
  implied: number;
  impliedMin: number;
  impliedMax: number;
  /** matches: the printed interval ±0.5 meets the implied range; above: printed higher (an
   * arithmetic time-average of a varying interval is ≥ the harmonic mean a count implies);
   * below: printed lower, which averaging cannot explain. */
  verdict: 'matches' | 'above' | 'below';
}

export function intervalChecks(): IntervalCheck[] {
  const out: IntervalCheck[] = [];
  for (const t of [TABLE_1, TABLE_3]) {
    for (const s of ['iir', 'icr'] as const) {
      for (const r of t.rows) {
        const th = theta(r.rank);
        const f = r.tasks.fixed;
        const n = r.tasks[s];
        const implied = (f * th) / n;
        const impliedMin = ((f - TASK_ROUNDING) * th) / (n + TASK_ROUNDING);
        const impliedMax = ((f + TASK_ROUNDING) * th) / (n - TASK_ROUNDING);
        const p = r.interval[s];
        const verdict = p + 0.5 < impliedMin ? 'below' : p - 0.5 > impliedMax ? 'above' : 'matches';
        out.push({ table: t.table, strategy: s, rank: r.rank, published: p, implied, impliedMin, impliedMax, verdict });
      }
    }
  }
  return out;
}

