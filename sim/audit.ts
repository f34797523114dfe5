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
//
// The checks live beside this file, one job each: audit-basis.ts (table accessors, the
// rounding allowance, verdicts), audit-transcription.ts, audit-bounds.ts (N·T and formula
// (5)'s bounds under each reading), audit-claims.ts (§4's success rates and queues),
// audit-intervals.ts (ICR ratios, the Mean row, intervals vs counts), audit-findings.ts
// (the worded findings). This file assembles the report and is the one import path.
import { MARGIN } from './audit-basis.js';
import { allQualityBounds, channelMinutes, readingBounds, weightIntervalProducts } from './audit-bounds.js';
import { queueChecks, successChecks } from './audit-claims.js';
import { findings, type AuditChecks, type Finding } from './audit-findings.js';
import { icrRatioChecks, intervalChecks, meanRowChecks } from './audit-intervals.js';
import { transcriptionChecks } from './audit-transcription.js';

export { MARGIN, verdictOf, type BoundSide, type Verdict } from './audit-basis.js';
export * from './audit-bounds.js';
export * from './audit-claims.js';
export type { Finding } from './audit-findings.js';
export * from './audit-intervals.js';
export * from './audit-transcription.js';

export interface AuditReport extends AuditChecks {
  paper: string;
  margin: number;
  findings: Finding[];
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
