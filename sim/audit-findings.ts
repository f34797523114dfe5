// The audit's findings: every check's result that a reader of the tables should know,
// worded with its arithmetic, worst first (infeasible, contradiction, marginal, note).
// Apart because wording the verdicts is a job of its own; the numbers come from the checks.
import type { PaperStrategy } from './paper-tables.js';
import { e6, MARGIN, pct, type BoundSide } from './audit-basis.js';
import type { ChannelMinutes, QualityBound, ReadingBound, WeightTerm } from './audit-bounds.js';
import type { QueueCheck, SuccessCheck } from './audit-claims.js';
import type { IntervalCheck, MeanRowCheck, RatioCheck } from './audit-intervals.js';
import type { TranscriptionCheck } from './audit-transcription.js';

/** Every check's result, as the findings read them (the report is these, its findings and its heading). */
export interface AuditChecks {
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
}

export interface Finding {
  /** infeasible: no run could produce it; contradiction: two published statements cannot both
   * hold; marginal: above a bound by less than the rounding allowance; note: a fact a reader
   * of the tables should know. */
  kind: 'infeasible' | 'contradiction' | 'marginal' | 'note';
  figure: string;
  why: string;
}

const S = (s: PaperStrategy) => s.toUpperCase();

export function findings(r: AuditChecks): Finding[] {
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
