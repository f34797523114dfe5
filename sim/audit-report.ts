// Markdown for `sim audit-paper`: every bound with the arithmetic that gives it, so a
// reader can redo each line by hand from the paper's tables.
import type { AuditReport, BoundSide, QualityBound, ReadingId, Verdict } from './audit.js';
import { READINGS } from './audit.js';

const e6 = (x: number, d = 3): string => `${(x / 1e6).toFixed(d)}E6`;
const pct = (x: number, d = 1): string => `${(x * 100).toFixed(d)}%`;
const up = (s: string): string => s.toUpperCase();

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

function verdictText(v: Verdict): string {
  return v === 'infeasible' ? '**INFEASIBLE**' : v === 'marginal' ? 'marginal' : 'feasible';
}

const SIDE_HEAD = ['bound', 'published', 'published / bound', 'verdict'];

/** One side (weighted or unweighted) of a bound as table cells, in SIDE_HEAD's order. */
function sideCells(sd: BoundSide): string[] {
  return [sd.bound.toFixed(4), String(sd.published), sd.required.toFixed(3), verdictText(sd.verdict)];
}

function sideLine(label: string, num: number, nt: number, sd: BoundSide): string {
  const need = `needs ${pct(sd.required)} success${sd.required > 1 ? ', more than every task' : ''}`;
  return `${label}: ${e6(num)} / ${e6(nt)} = **${sd.bound.toFixed(4)}**; published ${sd.published} = ${sd.required.toFixed(3)} × bound → ${verdictText(sd.verdict)} (${need})`;
}

function boundSection(b: QualityBound): string {
  const rows = b.terms.map((t) => [String(t.rank), String(t.interval), String(t.weight), e6(t.tasks), e6(t.weightedMinutes), e6(t.minutes)]);
  rows.push(['Σ', '', '', e6(b.tasks), e6(b.weightedMinutes), e6(b.minutes)]);
  return [
    `### ${b.scenario} ${up(b.strategy)} — tasks from Table ${b.taskTable}, quality from Table ${b.qualityTable}`,
    '',
    table(['rank', 'θ (min)', 'R', 'tasks', 'R × θ × tasks', 'θ × tasks'], rows),
    '',
    `- ${sideLine('weighted', b.weightedMinutes, b.channelMinutes, b.weighted)}`,
    `- ${sideLine('unweighted', b.minutes, b.channelMinutes, b.unweighted)}`,
    `- the published weighted score stands for ${b.weighted.published} × ${e6(b.channelMinutes)} / ${(b.weightedMinutes / b.tasks).toFixed(0)} = ${e6(b.updatesForPublished)} updates, against ${e6(b.tasks)} tasks submitted`,
    '',
  ].join('\n');
}

export function markdownAudit(r: AuditReport): string {
  const cm = r.channelMinutes;
  const out: string[] = [];
  out.push(
    "# The paper's Tables 1–4, audited (`sim audit-paper`)",
    '',
    `Source: ${r.paper}. Inputs: only the printed figures (sim/paper-tables.ts); no simulation.`,
    `A published figure above the best score its own task counts allow is **infeasible**; above it by less than ${pct(r.margin)}`,
    '(rounding of the printed counts, one extra submission per channel at step 0) it is *marginal*. Ranks are the paper\'s (rank 4 = 60-minute channels).',
    '',
    '## Verdict',
    '',
    ...r.findings.map((f) => `- **${f.kind}** — ${f.figure}: ${f.why}.`),
    '',
    '## 1. Channel-minutes of the runs (N·T), from FIXED',
    '',
    'FIXED submits every channel once per change interval θ, so a rank\'s FIXED tasks × θ = its channels × steps.',
    '',
    table(
      ['rank', 'θ (min)', 'FIXED tasks (Table 1)', 'θ × tasks', 'channels at N = 16000'],
      [
        ...cm.terms.map((t, i) => [String(t.rank), String(t.interval), e6(t.fixedTasks), e6(t.minutes), cm.channelsByRank[i]!.toFixed(0)]),
        ['Σ', '', e6(cm.terms.reduce((a, t) => a + t.fixedTasks, 0)), e6(cm.total), String(cm.channels)],
      ],
    ),
    '',
    `N·T = ${e6(cm.total)} channel-minutes = ${cm.channels} channels × ${cm.impliedSteps.toFixed(0)} steps. §4 says ${cm.textSteps} steps`,
    `(N·T = ${cm.channels} × ${cm.textSteps} = ${e6(cm.textTotal)}); the FIXED counts fit ${cm.textSteps} steps only with ${cm.impliedChannels.toFixed(0)} channels.`,
    'The bounds below divide by the N·T the counts themselves imply (section 4 repeats them with 90000 steps).',
    '',
    '## 2. Formula (5) at 100% success, rank by rank',
    '',
    'updateQuality = Σ_channels R × (λ_actual / λ_expected) / N, with λ_actual = updates / T and λ_expected = 1 / θ (§4.1).',
    "Summed over one rank's channels: R × θ × updates / T; divided by N: Σ_rank R × θ × updates / (N·T).",
    'Updates ≤ tasks, so putting the published task counts in place of updates gives the best score the strategy could reach.',
    '',
    table(
      ['rank', 'R', 'θ (min)', 'R × θ'],
      r.weightTimesInterval.map((w) => [String(w.rank), String(w.weight), String(w.interval), String(w.product)]),
    ),
    '',
    'R × θ is the same for every rank, so the weighted score is that constant × updates / (N·T): published / bound is the plain success rate.',
    '',
    ...r.bounds.map(boundSection),
    '## 3. Summary: published quality against the bound',
    '',
    table(
      ['scenario', 'strategy', 'tasks', ...SIDE_HEAD.map((h) => `${h} (w)`), ...SIDE_HEAD],
      r.bounds.map((b) => [b.scenario, up(b.strategy), e6(b.tasks), ...sideCells(b.weighted), ...sideCells(b.unweighted)]),
    ),
    '',
    '## 4. The same bounds under other readings',
    '',
    ...(Object.entries(READINGS) as [ReadingId, string][]).map(([id, text]) => `- \`${id}\`: ${text}`),
    '',
    table(
      ['scenario', 'strategy', 'reading', ...SIDE_HEAD.map((h) => `${h} (w)`), ...SIDE_HEAD],
      r.readings.map((x) => [x.scenario, up(x.strategy), x.reading, ...sideCells(x.weighted), ...sideCells(x.unweighted)]),
    ),
    '',
    '## 5. Success rates the published weighted scores need, against §4.2',
    '',
    'Needed = published (w) / bound (w), one success rate for all ranks. Rule: "about 30%" holds within ±5 points, "less than 15%" below 15%.',
    '',
    table(
      ['scenario', 'strategy', '§4.2 says', 'needed (channels)', 'needed (text-steps)', 'needed (per-group)', 'consistent'],
      r.success.map((s) => [
        s.scenario,
        up(s.strategy),
        s.claim ?? '(nothing)',
        pct(s.required.channels),
        pct(s.required['text-steps']),
        pct(s.required['per-group']),
        s.claim === null ? (s.consistent ? 'feasible' : '**no**') : s.consistent ? 'yes' : '**no**',
      ]),
    ),
    '',
    '## 6. ICR intervals: can one θ with ω = 2 produce them?',
    '',
    "ICR sets rank k's interval to θ·Δt·Π ω (§3.2); ω = 2 between every pair of neighbouring ranks (FIXED's column).",
    'With one θ every neighbouring ratio is ω at every instant, so every average of the intervals keeps it.',
    '',
    table(
      ['table', 'ranks', 'intervals', 'ratio', 'range with ±0.5 rounding', 'contains ω'],
      r.icrRatios.flatMap((c) =>
        c.pairs.map((p) => [
          String(c.table),
          `${p.upper}→${p.lower}`,
          `${p.lowerInterval} / ${p.upperInterval}`,
          p.ratio.toFixed(3),
          `${p.min.toFixed(3)}–${p.max.toFixed(3)}`,
          p.containsOmega ? 'yes' : '**no**',
        ]),
      ),
    ),
    '',
    '## 7. The "Mean" row of the interval columns',
    '',
    'Channel-weighted mean = Σ (FIXED tasks × θ) × interval / Σ (FIXED tasks × θ), the channels per rank of section 1 as weights.',
    '',
    table(
      ['table', 'strategy', 'published', 'plain mean of 5 ranks', 'channel-weighted mean', 'matches'],
      r.meanRows.map((m) => [String(m.table), up(m.strategy), String(m.published), m.plainMean.toFixed(1), m.channelWeightedMean.toFixed(1), m.matches]),
    ),
    '',
    '## 8. Printed intervals against the task counts',
    '',
    "A rank's channels × steps = FIXED tasks × θ, so its mean interval is FIXED tasks × θ / tasks (range: each count ±0.0005E6).",
    '',
    table(
      ['table', 'strategy', 'rank', 'printed', 'FIXED tasks × θ / tasks', 'range', 'verdict'],
      r.intervals.map((x) => [
        String(x.table),
        up(x.strategy),
        String(x.rank),
        String(x.published),
        x.implied.toFixed(1),
        `${x.impliedMin.toFixed(1)}–${x.impliedMax.toFixed(1)}`,
        x.verdict === 'matches' ? 'matches' : x.verdict === 'above' ? 'printed higher' : '**printed lower**',
      ]),
    ),
    '',
    '## 9. Queued tasks per crawler against the 5-slot queue',
    '',
    'Online crawlers by the churn model = crawlers × 1000 / (1000 + 600) (mean lifetime and rejoin gap, §4).',
    '',
    table(
      ['scenario', 'strategy', 'per crawler (text)', 'assumed online', 'queued', 'online by churn', 'per crawler then', 'cap', 'verdict'],
      r.queues.map((q) => [
        q.scenario,
        up(q.strategy),
        String(q.perCrawler),
        String(q.assumedOnline),
        q.queued.toFixed(0),
        q.churnOnline.toFixed(0),
        q.perCrawlerAtChurnOnline.toFixed(2),
        String(q.cap),
        verdictText(q.verdict),
      ]),
    ),
    '',
    '## 10. Transcription checks',
    '',
    table(
      ['check', 'arithmetic', 'published', 'ok'],
      r.transcription.map((t) => [t.what, t.arithmetic, t.publishedText, t.ok ? 'yes' : '**no**']),
    ),
    '',
  );
  return out.join('\n');
}
