// The audit's first step: do the transcribed Tables 1–4 (sim/paper-tables.ts) agree with the
// paper's own totals and prose, and are formula (5)'s weights the ones §4.1 gives? Apart
// because a mistyped figure would make every later check wrong for the wrong reason.
import { PAPER_SETUP, PAPER_STRATEGIES, PAPER_TEXT, TABLE_1, TABLE_3, TABLE_4 } from './paper-tables.js';
import { e6, pct, TASK_ROUNDING, theta, weight } from './audit-basis.js';

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
