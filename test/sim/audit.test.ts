// `sim audit-paper`: the expectations below were worked out by hand from the paper's
// Tables 1–4 (the arithmetic is in the comments), not by the code under test.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { AuditReport } from '../../sim/audit.js';
import {
  auditPaper,
  channelMinutes,
  icrRatioChecks,
  meanRowChecks,
  qualityBound,
  queueChecks,
  readingBounds,
  successChecks,
  transcriptionChecks,
  verdictOf,
  weightIntervalProducts,
} from '../../sim/audit.js';

describe('audit of the paper: channel-minutes from FIXED', () => {
  it('Σ FIXED tasks × θ = 1600.02E6 = 16000 channels × 100001 steps', () => {
    // 0.905×60 = 54.3; 3.295×120 = 395.4; 2.979×240 = 714.96; 0.795×480 = 381.6; 0.056×960 = 53.76
    // Σ = 1600.02 (×10⁶). / 16000 = 100001.25 steps; / 90000 = 17778 channels.
    const cm = channelMinutes();
    expect(cm.terms.map((t) => t.minutes / 1e6)).toEqual([54.3, 395.4, 714.96, 381.6, 53.76].map((x) => expect.closeTo(x, 6)));
    expect(cm.total).toBeCloseTo(1600.02e6, 0);
    expect(cm.impliedSteps).toBeCloseTo(100001.25, 2);
    expect(Math.round(cm.impliedChannels)).toBe(17778);
    expect(cm.textTotal).toBe(1440e6);
  });

  it('weight × change interval is 960 for every rank', () => {
    // 16×60 = 8×120 = 4×240 = 2×480 = 1×960 = 960
    expect(weightIntervalProducts().map((w) => w.product)).toEqual([960, 960, 960, 960, 960]);
  });
});

describe('audit of the paper: formula (5) at 100% success', () => {
  it('ruc IIR: 9.1474 published, 5.1899 reachable (weighted); 1.9827 vs 1.1267 (unweighted)', () => {
    // R×θ×tasks: 960 × (0.738 + 3.506 + 3.388 + 0.943 + 0.075) = 960 × 8.650 = 8304 (×10⁶); / 1600.02 = 5.18994
    // θ×tasks: 44.28 + 420.72 + 813.12 + 452.64 + 72.00 = 1802.76; / 1600.02 = 1.12671
    const b = qualityBound('ruc', 'iir');
    expect(b.weightedMinutes).toBeCloseTo(8304e6, 0);
    expect(b.minutes).toBeCloseTo(1802.76e6, 0);
    expect(b.weighted.bound).toBeCloseTo(5.18994, 5);
    expect(b.unweighted.bound).toBeCloseTo(1.12671, 5);
    expect(b.weighted.required).toBeCloseTo(9.1474 / 5.18994, 4); // 1.7625
    expect(b.weighted.verdict).toBe('infeasible');
    expect(b.unweighted.verdict).toBe('infeasible');
    // 9.1474 × 1600.02 / 960 = 15.2459 (×10⁶) updates out of 8.650 (×10⁶) tasks
    expect(b.updatesForPublished / 1e6).toBeCloseTo(15.2459, 3);
  });

  it('ruc ICR: 8.2611 published, 5.3705 reachable; unweighted 1.9701 vs 1.1029', () => {
    // 960 × 8.951 = 8592.96; / 1600.02 = 5.37053
    // 58.5 + 411.36 + 913.2 + 331.68 + 49.92 = 1764.66; / 1600.02 = 1.10290
    const b = qualityBound('ruc', 'icr');
    expect(b.weighted.bound).toBeCloseTo(5.37053, 5);
    expect(b.unweighted.bound).toBeCloseTo(1.1029, 4);
    expect([b.weighted.verdict, b.unweighted.verdict]).toEqual(['infeasible', 'infeasible']);
  });

  it('rec: the published weighted scores need 41.5% / 96.9% / 80.8% success', () => {
    // FIXED: 960 × 8.030 / 1600.02 = 4.81794; 1.9987 / 4.81794 = 0.41485
    // IIR:   960 × 3.484 / 1600.02 = 2.09037; 2.0266 / 2.09037 = 0.96949
    // ICR:   960 × 4.160 / 1600.02 = 2.49597; 2.0176 / 2.49597 = 0.80834
    const got = (['fixed', 'iir', 'icr'] as const).map((s) => qualityBound('rec', s).weighted);
    expect(got.map((g) => g.bound)).toEqual([4.81794, 2.09037, 2.49597].map((x) => expect.closeTo(x, 5)));
    expect(got.map((g) => g.required)).toEqual([0.41485, 0.96949, 0.80834].map((x) => expect.closeTo(x, 4)));
    expect(got.every((g) => g.verdict === 'feasible')).toBe(true);
  });

  it('rec IIR unweighted 0.4936 and ruc FIXED unweighted 1.0013 sit just above their bounds (marginal)', () => {
    // IIR: 15.06 + 145.44 + 362.88 + 226.08 + 36.48 = 785.94; / 1600.02 = 0.49121; 0.4936 / 0.49121 = 1.0049
    const iir = qualityBound('rec', 'iir').unweighted;
    expect(iir.bound).toBeCloseTo(0.49121, 5);
    expect(iir.required).toBeCloseTo(1.0049, 4);
    expect(iir.verdict).toBe('marginal');
    // FIXED: Σ θ × tasks is N·T itself, so the bound is exactly 1
    const fixed = qualityBound('ruc', 'fixed');
    expect(fixed.unweighted.bound).toBe(1);
    expect(fixed.unweighted.verdict).toBe('marginal');
    // weighted: 4.7873 / 4.81794 = 0.99364 — FIXED under ruc completed 99.4% of its tasks
    expect(fixed.weighted.required).toBeCloseTo(0.99364, 4);
  });

  it('Table 4 stays infeasible under the other readings of (5) and of T', () => {
    // T = 90000: 8304 / 1440 = 5.76667 for ruc IIR.
    // Per group: (16×0.738/0.905 + 8×3.506/3.295 + 4×3.388/2.979 + 2×0.943/0.795 + 1×0.075/0.056) / 5
    //          = (13.0475 + 8.5123 + 4.5492 + 2.3723 + 1.3393) / 5 = 5.9641
    const rb = readingBounds().filter((r) => r.scenario === 'ruc' && r.strategy === 'iir');
    expect(rb.find((r) => r.reading === 'text-steps')!.weighted.bound).toBeCloseTo(5.76667, 5);
    expect(rb.find((r) => r.reading === 'per-group')!.weighted.bound).toBeCloseTo(5.9641, 4);
    const ruc = readingBounds().filter((r) => r.scenario === 'ruc' && r.strategy !== 'fixed');
    expect(ruc).toHaveLength(6);
    expect(ruc.every((r) => r.weighted.verdict === 'infeasible' && r.unweighted.verdict === 'infeasible')).toBe(true);
  });

  it('verdicts: at or below the bound feasible, up to +0.5% marginal, beyond infeasible', () => {
    expect(verdictOf(1, 1)).toBe('feasible');
    expect(verdictOf(1.004, 1)).toBe('marginal');
    expect(verdictOf(1.006, 1)).toBe('infeasible');
  });
});

describe("audit of the paper: the text's success rates, ICR ratios, Mean rows, queues", () => {
  it("§4.2's 30% and < 15% contradict Tables 1–2 under every reading", () => {
    const sc = successChecks();
    const bad = sc.filter((s) => !s.consistent).map((s) => `${s.scenario} ${s.strategy}`);
    expect(bad).toEqual(['rec fixed', 'rec iir', 'rec icr', 'ruc iir', 'ruc icr']);
    // rec FIXED at T = 90000: 1.9987 / (960 × 8.030 / 1440) = 1.9987 / 5.35333 = 0.37336;
    // per group: 1.9987 / ((16 + 8 + 4 + 2 + 1) / 5) = 1.9987 / 6.2 = 0.32237 — all above 15%
    const fixed = sc.find((s) => s.scenario === 'rec' && s.strategy === 'fixed')!;
    expect(fixed.required['text-steps']).toBeCloseTo(0.37336, 4);
    expect(fixed.required['per-group']).toBeCloseTo(0.32237, 4);
  });

  it("Table 3's ICR ratios 2.0 / 1.70 / 2.86 / 2.06 cannot come from one θ with ω = 2", () => {
    // 112/56 = 2; 190/112 = 1.69643; 544/190 = 2.86316; 1119/544 = 2.05699
    const t3 = icrRatioChecks().find((c) => c.table === 3)!;
    expect(t3.omega).toBe(2);
    expect(t3.pairs.map((p) => p.ratio)).toEqual([2, 1.69643, 2.86316, 2.05699].map((x) => expect.closeTo(x, 5)));
    // 190 ± 0.5 over 112 ± 0.5 spans 1.684–1.709: never 2
    expect(t3.pairs.map((p) => p.containsOmega)).toEqual([true, false, false, false]);
    expect(t3.consistent).toBe(false);
  });

  it("Table 3's Mean row is the channel-weighted mean, Table 1's repeats rank 4", () => {
    // weights FIXED tasks × θ = 54.3, 395.4, 714.96, 381.6, 53.76 (Σ 1600.02):
    // IIR: (54.3×74 + 395.4×110 + 714.96×214 + 381.6×399 + 53.76×782) / 1600.02 = 394812.36 / 1600.02 = 246.755
    // ICR: (54.3×56 + 395.4×112 + 714.96×190 + 381.6×544 + 53.76×1119) / 1600.02 = 450915.84 / 1600.02 = 281.819
    // plain means: (74+110+214+399+782)/5 = 315.8; (56+112+190+544+1119)/5 = 404.2; FIXED 1860/5 = 372
    const m = meanRowChecks();
    const t3 = m.filter((x) => x.table === 3);
    expect(t3.map((x) => x.channelWeightedMean)).toEqual([285.668, 246.755, 281.819].map((x) => expect.closeTo(x, 2)));
    expect(t3.map((x) => x.plainMean)).toEqual([372, 315.8, 404.2].map((x) => expect.closeTo(x, 6)));
    expect(t3.map((x) => x.matches)).toEqual(['channel-weighted', 'channel-weighted', 'channel-weighted']);
    expect(m.filter((x) => x.table === 1).every((x) => x.matches === 'rank 4 row')).toBe(true);
  });

  it("rec FIXED's 17 queued tasks per crawler exceed the 5-slot queue", () => {
    // 17 × 700 = 11900 queued; online by churn 1400 × 1000 / 1600 = 875; 11900 / 875 = 13.6 > 5
    const q = queueChecks();
    const fixed = q.find((x) => x.scenario === 'rec' && x.strategy === 'fixed')!;
    expect(fixed.perCrawlerAtChurnOnline).toBeCloseTo(13.6, 6);
    expect(fixed.verdict).toBe('infeasible');
    expect(q.filter((x) => x.verdict !== 'feasible')).toHaveLength(1);
  });

  it('the transcription agrees with the Total rows and the §4.3 percentages', () => {
    const bad = transcriptionChecks().filter((c) => !c.ok);
    expect(bad).toEqual([]);
  });
});

describe('sim audit-paper (CLI)', () => {
  const cli = (...args: string[]) => spawnSync(process.execPath, ['bin/sim.js', 'audit-paper', ...args], { encoding: 'utf8', timeout: 120_000 });

  it('prints the arithmetic and the verdict as Markdown', () => {
    const r = cli();
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('8304.000E6 / 1600.020E6 = **5.1899**');
    expect(r.stdout).toContain('| 2 | 240 | 4 | 3.388E6 | 3252.480E6 | 813.120E6 |');
    expect(r.stdout).toMatch(/\*\*infeasible\*\* — Table 4 IIR weighted 9\.1474/);
  });

  it('--json gives the whole audit; the infeasible quality figures are exactly Table 4 IIR/ICR', () => {
    const r = cli('--json');
    expect(r.status).toBe(0);
    const rep = JSON.parse(r.stdout) as AuditReport;
    expect(rep).toEqual(JSON.parse(JSON.stringify(auditPaper())));
    const inf = rep.findings.filter((f) => f.kind === 'infeasible' && f.figure.startsWith('Table')).map((f) => f.figure);
    expect(inf).toEqual(['Table 4 IIR weighted 9.1474', 'Table 4 IIR unweighted 1.9827', 'Table 4 ICR weighted 8.2611', 'Table 4 ICR unweighted 1.9701']);
  });

  it('rejects an unknown option with the help and exit 2', () => {
    const r = cli('--bogus');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown option/);
  });
});
