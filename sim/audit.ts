// `sim audit-paper`: what the paper's published Tables 1–4 imply about each other.
//
// Pure arithmetic on the transcribed figures of sim/paper-tables.ts — no simulation.
// Formula (5) is evaluated here from first principles, rank by rank (the weights are
// src/recrawl/quality.ts's groupWeights, checked against §4.1), because this is a
// check on the paper's numbers, not on the simulator's implementation of (5).
//
// The two facts everything rests on:
//  1. FIXED submits every channel once per change interval θ, so in Table 1 (and 3)
//     Σ_rank FIXED tasks × θ = channels × steps (N·T, the run's channel-minutes), and
//     FIXED tasks × θ of one rank = that rank's channels × steps.
//  2. Formula (5) per channel is R × λ_actual / λ_expected with λ_actual = updates / T
//     and λ_expected = 1 / θ; summed over a rank's channels it is R × θ × updates / T.
//     Divided by N: quality = Σ_rank R × θ × updates / (N·T). Updates ≤ tasks, so the
//     same sum over the published task counts is the best score a strategy could reach
//     (every task succeeding).
import type { PaperQualityTable, PaperScenario, PaperStrategy, PaperTaskTable } from './paper-tables.js';
import { groupWeights } from '../src/recrawl/quality.js';
import { PAPER_SETUP, PAPER_STRATEGIES, PAPER_TEXT, TABLE_1, TABLE_2, TABLE_3, TABLE_4 } from './paper-tables.js';

/** Allowance before a published figure above its bound counts as infeasible: task counts
 * are printed to 3 decimals of 10⁶ (≤ 0.06% of a rank's θ × tasks sum), and a run that
 * submits every channel once more at step 0 adds N × mean θ ≤ 0.3% to the channel-minutes
 * derived from FIXED. Together < 0.5%. */
export const MARGIN = 0.005;

/** Half a unit in the last printed digit of a task count (0.001E6). */
const TASK_ROUNDING = 500;

export type Verdict = 'feasible' | 'marginal' | 'infeasible';

/** feasible: published ≤ bound; marginal: above it by at most MARGIN; infeasible: beyond. */
export function verdictOf(published: number, bound: number, margin = MARGIN): Verdict {
  if (published <= bound) return 'feasible';
  return published <= bound * (1 + margin) ? 'marginal' : 'infeasible';
}

const taskTable = (s: PaperScenario): PaperTaskTable => (s === 'rec' ? TABLE_1 : TABLE_3);
const qualityTable = (s: PaperScenario): PaperQualityTable => (s === 'rec' ? TABLE_2 : TABLE_4);
const theta = (rank: number): number => PAPER_SETUP.changeInterval[rank]!;
/** Formula (5)'s weight of paper rank r (4 = the 60-minute group): src/recrawl/quality.ts's
 * groupWeights, our group g = K − 1 − r. The transcription check below holds it to §4.1's words. */
const RANKS = TABLE_1.rows.length;
const weight = (rank: number): number => groupWeights(RANKS)[RANKS - 1 - rank]!;

// ---------------------------------------------------------------- transcription

export interface TranscriptionCheck {
  what: string;
  arithmetic: string;
  computed: number;
  published: number;
  /** The published value as printed. */
  publishedText: string;
  tolerance: number;
  ok: boolean;
}

const e6 = (x: number, d = 3): string => `${(x / 1e6).toFixed(d)}E6`;
const pct = (x: number, d = 1): string => `${(x * 100).toFixed(d)}%`;

/** Internal consistency of the transcribed tables with the paper's own totals and prose. */
export function transcriptionChecks(): TranscriptionCheck[] {
  const out: TranscriptionCheck[] = [];
  for (const t of [TABLE_1, TABLE_3]) {
    for (const s of PAPER_STRATEGIES) {
      const parts = t.rows.map((r) => r.tasks[s]);
      const sum = parts.reduce((a, b) => a + b, 0);
      const tol = TASK_ROUNDING * (parts.length + 1);
      out.push({
        what: `Table ${t.table} ${s.toUpperCase()}: ranks sum to the Total row`,
        arithmetic: `${parts.map((p) => e6(p)).join(' + ')} = ${e6(sum)}`,
        computed: sum,
        published: t.total[s],
        publishedText: `Table ${t.table} Total ${e6(t.total[s])}`,
        tolerance: tol,
        ok: Math.abs(sum - t.total[s]) <= tol,
      });
    }
  }
  TABLE_1.rows.forEach((r, i) => {
    const r3 = TABLE_3.rows[i]!;
    out.push({
      what: `Table 3 FIXED rank ${r.rank} equals Table 1's (same channels, same fixed intervals)`,
      arithmetic: `${e6(r3.tasks.fixed)} vs ${e6(r.tasks.fixed)}`,
      computed: r3.tasks.fixed,
      published: r.tasks.fixed,
      publishedText: `Table 1 rank ${r.rank} ${e6(r.tasks.fixed)}`,
      tolerance: 0,
      ok: r3.tasks.fixed === r.tasks.fixed,
    });
  });
  for (const t of [TABLE_1, TABLE_3]) {
    const ivs = t.rows.map((r) => r.interval.fixed);
    const want = t.rows.map((r) => theta(r.rank));
    out.push({
      what: `Table ${t.table} FIXED intervals are the change intervals θ of ranks 4..0`,
      arithmetic: `${ivs.join(' / ')} vs ${want.join(' / ')}`,
      computed: ivs.reduce((a, b) => a + b, 0),
      published: want.reduce((a, b) => a + b, 0),
      publishedText: `§4 θ = ${want.join(', ')}`,
      tolerance: 0,
      ok: ivs.every((v, i) => v === want[i]),
    });
  }
  {
    const ranks = TABLE_1.rows.map((r) => r.rank);
    const ours = ranks.map(weight);
    const paper = ranks.map((r) => PAPER_SETUP.weight[r]!);
    out.push({
      what: 'Formula (5) weights of ranks 4..0 (src/recrawl/quality.ts groupWeights) are §4.1\'s',
      arithmetic: `${ours.join(' / ')} vs ${paper.join(' / ')}`,
      computed: ours.reduce((a, b) => a + b, 0),
      published: paper.reduce((a, b) => a + b, 0),
      publishedText: `§4.1 ${paper.join(', ')}`,
      tolerance: 0,
      ok: ours.every((w, i) => w === paper[i]),
    });
  }
  for (const s of ['iir', 'icr'] as const) {
    const r = TABLE_3.total[s] / TABLE_3.total.fixed - 1;
    const claim = PAPER_TEXT.rucTaskIncrease[s];
    out.push({
      what: `§4.3's task increase, ${s.toUpperCase()} vs FIXED (Table 3 totals)`,
      arithmetic: `${e6(TABLE_3.total[s])} / ${e6(TABLE_3.total.fixed)} − 1 = ${(r * 100).toFixed(2)}%`,
      computed: r,
      published: claim,
      publishedText: `§4.3 ${pct(claim, claim * 100 === Math.round(claim * 100) ? 0 : 1)}`,
      tolerance: 0.005,
      ok: Math.abs(r - claim) <= 0.005,
    });
    const q = TABLE_4.weighted[s] / TABLE_4.weighted.fixed - 1;
    const qc = PAPER_TEXT.rucWeightedIncrease[s];
    out.push({
      what: `§4.3's weighted-quality increase, ${s.toUpperCase()} vs FIXED (Table 4)`,
      arithmetic: `${TABLE_4.weighted[s]} / ${TABLE_4.weighted.fixed} − 1 = ${(q * 100).toFixed(2)}%`,
      computed: q,
      published: qc,
      publishedText: `§4.3 ${pct(qc, 1)}`,
      tolerance: 0.005,
      ok: Math.abs(q - qc) <= 0.005,
    });
  }
  return out;
}

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

export interface BoundSide {
  /** Best formula-(5) score with every published task succeeding. */
  bound: number;
  published: number;
  /** published / bound: the success rate the figure needs (task-weighted for the weighted
   * score, θ × tasks-weighted for the unweighted one); > 1 is impossible. */
  required: number;
  verdict: Verdict;
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

function side(published: number, bound: number): BoundSide {
  return { bound, published, required: published / bound, verdict: verdictOf(published, bound) };
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

// ---------------------------------------------------------------- success rates vs the text

export interface SuccessCheck {
  scenario: PaperScenario;
  strategy: PaperStrategy;
  /** What §4.2 says, or null where it says nothing. */
  claim: string | null;
  /** The success rate each reading needs for the published weighted score (uniform success). */
  required: Record<ReadingId, number>;
  /** Rule: "about 30%" holds within ±5 points, "less than 15%" below 15%, no claim: ≤ 100%. */
  consistent: boolean;
}

export function successChecks(): SuccessCheck[] {
  const rb = readingBounds();
  const out: SuccessCheck[] = [];
  for (const sc of ['rec', 'ruc'] as const) {
    for (const s of PAPER_STRATEGIES) {
      const req = (id: ReadingId) => rb.find((x) => x.reading === id && x.scenario === sc && x.strategy === s)!.weighted.required;
      const required = { channels: req('channels'), 'text-steps': req('text-steps'), 'per-group': req('per-group') };
      const values = Object.values(required);
      let claim: string | null;
      let consistent: boolean;
      if (s === 'fixed' && sc === 'rec') {
        claim = `less than ${PAPER_TEXT.successFixedRecBelow * 100}%`;
        consistent = values.some((v) => v < PAPER_TEXT.successFixedRecBelow);
      } else if (s !== 'fixed') {
        claim = `about ${PAPER_TEXT.successIirIcr * 100}%${sc === 'ruc' ? ' ("also true under the case of RUC")' : ''}`;
        consistent = values.some((v) => Math.abs(v - PAPER_TEXT.successIirIcr) <= 0.05);
      } else {
        claim = null;
        consistent = values.some((v) => v <= 1);
      }
      out.push({ scenario: sc, strategy: s, claim, required, consistent });
    }
  }
  return out;
}

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

// ---------------------------------------------------------------- queues

export interface QueueCheck {
  scenario: PaperScenario;
  strategy: PaperStrategy;
  /** §4.2 / §4.3: queued tasks per crawler at the text's assumed online count. */
  perCrawler: number;
  assumedOnline: number;
  queued: number;
  /** Online crawlers the churn model implies: crawlers × lifetime / (lifetime + rejoin gap). */
  churnOnline: number;
  perCrawlerAtChurnOnline: number;
  cap: number;
  verdict: Verdict;
}

export function queueChecks(): QueueCheck[] {
  const frac = PAPER_SETUP.lifetimeMean / (PAPER_SETUP.lifetimeMean + PAPER_SETUP.rejoinMean);
  const out: QueueCheck[] = [];
  for (const [sc, q, crawlers] of [
    ['rec', PAPER_TEXT.queueRec, TABLE_1.crawlers],
    ['ruc', PAPER_TEXT.queueRuc, TABLE_3.crawlers],
  ] as const) {
    for (const s of PAPER_STRATEGIES) {
      const per = q.perCrawler[s];
      const queued = per * q.assumedOnline;
      const churnOnline = crawlers * frac;
      const atChurn = queued / churnOnline;
      // A crawler queues at most `cap` tasks, whatever the online count.
      out.push({
        scenario: sc,
        strategy: s,
        perCrawler: per,
        assumedOnline: q.assumedOnline,
        queued,
        churnOnline,
        perCrawlerAtChurnOnline: atChurn,
        cap: PAPER_SETUP.queueCap,
        verdict: verdictOf(Math.min(per, atChurn), PAPER_SETUP.queueCap, 0),
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------- the report

export interface Finding {
  /** infeasible: no run could produce it; contradiction: two published statements cannot both
   * hold; marginal: above a bound by less than the rounding allowance; note: a fact a reader
   * of the tables should know. */
  kind: 'infeasible' | 'contradiction' | 'marginal' | 'note';
  figure: string;
  why: string;
}

export interface AuditReport {
  paper: string;
  margin: number;
  transcription: TranscriptionCheck[];
  channelMinutes: ChannelMinutes;
  weightTimesInterval: WeightTerm[];
  bounds: QualityBound[];
  readings: ReadingBound[];
  success: SuccessCheck[];
  icrRatios: RatioCheck[];
  meanRows: MeanRowCheck[];
  intervals: IntervalCheck[];
  queues: QueueCheck[];
  findings: Finding[];
}

const S = (s: PaperStrategy) => s.toUpperCase();

function findings(r: Omit<AuditReport, 'findings' | 'paper' | 'margin'>): Finding[] {
  const out: Finding[] = [];
  const cm = r.channelMinutes;
  out.push({
    kind: 'note',
    figure: 'run length',
    why: `Σ FIXED tasks × θ (Table 1) = ${e6(cm.total, 2)} channel-minutes = ${cm.channels} channels × ${Math.round(cm.impliedSteps)} steps, not × ${cm.textSteps} as §4 states (or ${Math.round(cm.impliedChannels)} channels × ${cm.textSteps} steps)`,
  });
  const wt = r.weightTimesInterval;
  if (wt.every((x) => x.product === wt[0]!.product)) {
    out.push({
      kind: 'note',
      figure: 'formula (5), weighted',
      why: `R × θ = ${wt[0]!.product} for every rank, so the weighted score is ${wt[0]!.product} × updates / (N·T): it counts completed tasks, whatever their rank, and published / bound is the plain success rate`,
    });
  }
  for (const b of r.bounds) {
    const readings = r.readings.filter((x) => x.scenario === b.scenario && x.strategy === b.strategy);
    for (const [label, sideOf] of [
      ['weighted', (x: { weighted: BoundSide }) => x.weighted],
      ['unweighted', (x: { unweighted: BoundSide }) => x.unweighted],
    ] as const) {
      const sd = sideOf(b);
      if (sd.verdict === 'feasible') continue;
      const allInf = readings.every((x) => sideOf(x).verdict === 'infeasible');
      out.push({
        kind: sd.verdict,
        figure: `Table ${b.qualityTable} ${S(b.strategy)} ${label} ${sd.published}`,
        why:
          `${b.scenario} ${S(b.strategy)} submitted ${e6(b.tasks)} tasks (Table ${b.taskTable}); at 100% success formula (5) reaches ${sd.bound.toFixed(4)}, ` +
          `the figure is ${sd.required.toFixed(3)}× that` +
          (sd.verdict === 'infeasible' ? (allInf ? ' (infeasible under every reading of (5) and of T)' : '') : ` (within the ${pct(MARGIN)} rounding allowance)`) +
          readings
            .filter((x) => x.reading !== 'channels' && sideOf(x).verdict !== sd.verdict)
            .map((x) => `; ${sideOf(x).verdict} under the ${x.reading} reading (${sideOf(x).required.toFixed(3)}×)`)
            .join(''),
      });
    }
  }
  for (const s of r.success) {
    if (s.consistent || s.claim === null) continue;
    const q = s.required;
    const fmt = (v: number) => (v > 1 ? `${pct(v)} (impossible)` : pct(v));
    out.push({
      kind: 'contradiction',
      figure: `§4.2's success rate of ${s.claim}, ${s.scenario} ${S(s.strategy)}`,
      why: `Table ${s.scenario === 'rec' ? 2 : 4}'s weighted score needs ${fmt(q.channels)} (T = ${Math.round(cm.impliedSteps)} from FIXED), ${fmt(q['text-steps'])} (T = ${cm.textSteps}), ${fmt(q['per-group'])} (per-group reading of (5))`,
    });
  }
  for (const c of r.icrRatios) {
    if (c.consistent) continue;
    out.push({
      kind: 'contradiction',
      figure: `Table ${c.table} ICR intervals`,
      why: `neighbouring-rank ratios ${c.pairs.map((p) => p.ratio.toFixed(2)).join(' / ')} (rank 4→0); one θ with ω = ${c.omega} gives ${c.omega} for every pair, and ${c.pairs
        .filter((p) => !p.containsOmega)
        .map((p) => `${p.lowerInterval}/${p.upperInterval}`)
        .join(', ')} exclude ${c.omega} even with the printed intervals' rounding`,
    });
  }
  for (const t of [1, 3] as const) {
    const rows = r.meanRows.filter((m) => m.table === t);
    if (rows[0]!.equalsRank4) {
      out.push({ kind: 'note', figure: `Table ${t} Mean row`, why: `it repeats the rank-4 row (${rows.map((m) => m.published).join('/')}); the plain means would be ${rows.map((m) => m.plainMean.toFixed(0)).join('/')}, the channel-weighted ${rows.map((m) => m.channelWeightedMean.toFixed(0)).join('/')}` });
    } else {
      out.push({
        kind: 'note',
        figure: `Table ${t} Mean row ${rows.map((m) => m.published).join('/')}`,
        why: `channel-weighted means (channels per rank ∝ FIXED tasks × θ) are ${rows.map((m) => m.channelWeightedMean.toFixed(1)).join('/')}; the plain means of the five ranks would be ${rows.map((m) => m.plainMean.toFixed(1)).join('/')}`,
      });
    }
  }
  const below = r.intervals.filter((x) => x.verdict === 'below');
  const above = r.intervals.filter((x) => x.verdict === 'above');
  if (below.length + above.length > 0) {
    const list = (xs: IntervalCheck[]) => xs.map((x) => `T${x.table} ${S(x.strategy)} rank ${x.rank}: ${x.published} vs ${x.implied.toFixed(0)}`).join('; ');
    out.push({
      kind: 'note',
      figure: 'intervals vs task counts',
      why: `${r.intervals.length - below.length - above.length} of ${r.intervals.length} printed IIR/ICR intervals equal FIXED tasks × θ / tasks within rounding` +
        (below.length ? `; lower than the count implies (averaging cannot explain): ${list(below)}` : '') +
        (above.length ? `; higher (a time-average of a varying interval can be): ${list(above)}` : ''),
    });
  }
  for (const q of r.queues) {
    if (q.verdict === 'feasible') continue;
    out.push({
      kind: 'infeasible',
      figure: `§4.${q.scenario === 'rec' ? 2 : 3} queue of ${q.perCrawler} per crawler, ${q.scenario} ${S(q.strategy)}`,
      why: `the task queue holds at most ${q.cap} (§4); ${q.perCrawler} × ${q.assumedOnline} assumed online = ${q.queued.toFixed(0)} queued, still ${q.perCrawlerAtChurnOnline.toFixed(1)} per crawler at the ${q.churnOnline.toFixed(0)} online that the churn model implies`,
    });
  }
  const order: Finding['kind'][] = ['infeasible', 'contradiction', 'marginal', 'note'];
  return out.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
}

export function auditPaper(): AuditReport {
  const base = {
    transcription: transcriptionChecks(),
    channelMinutes: channelMinutes(),
    weightTimesInterval: weightIntervalProducts(),
    bounds: allQualityBounds(),
    readings: readingBounds(),
    success: successChecks(),
    icrRatios: icrRatioChecks(),
    meanRows: meanRowChecks(),
    intervals: intervalChecks(),
    queues: queueChecks(),
  };
  return {
    paper: 'Xu, Zhang, Zhang, Fang: Scale-adaptable recrawl strategies for DHT-based distributed Web crawling system (NPC 2010), Tables 1–4 and §4',
    margin: MARGIN,
    ...base,
    findings: findings(base),
  };
}
