// Outcomes of a check: the first comparison (subject and verifier) and, when
// they disagree, the third crawl that says who is wrong. A pairwise
// disagreement alone accuses nobody: it cannot tell the forger from its victim.
import type { CrawlComparison, Verdict } from './compare.js';
import type { Outcome } from './reputation.js';
import { spotCheckOptions, type SpotCheckOptions } from './spot-check.js';

/** One crawl in a check: whose it was, and which upload. */
export interface CheckParty {
  volunteer: string;
  taskId: string;
  receivedAt: number;
}

export interface PartyOutcome {
  volunteer: string;
  outcome: Outcome;
}

export interface PairResolution {
  outcomes: PartyOutcome[];
  /** The pair disagrees: a third crawl must say who is wrong. */
  needsTieBreak: boolean;
}

function agreeOutcome(p: CheckParty, at: number, weight: number, reason: string): PartyOutcome {
  return { volunteer: p.volunteer, outcome: { kind: 'agree', at, weight, taskId: p.taskId, uploadedAt: p.receivedAt, reason } };
}

/**
 * Outcomes of the first comparison (subject `a`, verifier `b`): agreement
 * verifies both crawls; an inconclusive comparison is recorded as such; a
 * disagreement records nothing yet and asks for a third crawl — a pair alone
 * cannot tell the forger from its victim.
 */
export function resolvePair(cmp: CrawlComparison, a: CheckParty, b: CheckParty, at: number, options: Partial<SpotCheckOptions> | SpotCheckOptions = {}): PairResolution {
  const o = spotCheckOptions(options);
  if (cmp.verdict === 'agree') {
    const outcomes = [agreeOutcome(a, at, 1, 'check agreed')];
    if (o.verifierCredit > 0) outcomes.push(agreeOutcome(b, at, o.verifierCredit, 'verification agreed'));
    return { outcomes, needsTieBreak: false };
  }
  if (cmp.verdict === 'inconclusive') {
    const inc = (p: CheckParty): PartyOutcome => ({ volunteer: p.volunteer, outcome: { kind: 'inconclusive', at, taskId: p.taskId, reason: cmp.note } });
    return { outcomes: [inc(a), inc(b)], needsTieBreak: false };
  }
  return { outcomes: [], needsTieBreak: true };
}

export interface TieBreak {
  outcomes: PartyOutcome[];
  /** The crawl the two others agree against; null when there is no such crawl. */
  odd: 'a' | 'b' | 'c' | null;
  note: string;
}

function reasonsOf(cmp: CrawlComparison): string {
  return cmp.disagreements.map((d) => d.reason).join(', ');
}

/**
 * Breaks a disagreement between `a` and `b` with a third crawl `c`: the crawl
 * that both others disagree with, while those two agree with each other, is
 * the odd one out and takes a disagreement (weighted by the weaker of its two
 * comparisons); the two others are verified. Any other pattern (all three
 * differ; c agrees with both) accuses nobody: the agreeing pairs are credited
 * and the rest is inconclusive.
 */
export function resolveTieBreak(
  ab: CrawlComparison,
  ac: CrawlComparison,
  bc: CrawlComparison,
  parties: { a: CheckParty; b: CheckParty; c: CheckParty },
  at: number,
  options: Partial<SpotCheckOptions> | SpotCheckOptions = {},
): TieBreak {
  const o = spotCheckOptions(options);
  const v: Record<'ab' | 'ac' | 'bc', Verdict> = { ab: ab.verdict, ac: ac.verdict, bc: bc.verdict };
  const cmps = { ab, ac, bc };
  const sides = ['a', 'b', 'c'] as const;
  const pairsOf = { a: ['ab', 'ac'], b: ['ab', 'bc'], c: ['ac', 'bc'] } as const;
  const otherPair = { a: 'bc', b: 'ac', c: 'ab' } as const;
  for (const x of sides) {
    const [p1, p2] = pairsOf[x];
    if (v[p1] === 'disagree' && v[p2] === 'disagree' && v[otherPair[x]] === 'agree') {
      const weight = Math.min(cmps[p1].weight, cmps[p2].weight);
      const reason = reasonsOf(cmps[p1].weight <= cmps[p2].weight ? cmps[p1] : cmps[p2]);
      const outcomes: PartyOutcome[] = [
        { volunteer: parties[x].volunteer, outcome: { kind: 'disagree', at, weight, taskId: parties[x].taskId, reason: `outvoted by two crawls (${reason})` } },
      ];
      for (const y of sides) {
        const w = y === 'a' ? 1 : o.verifierCredit;
        if (y !== x && w > 0) outcomes.push(agreeOutcome(parties[y], at, w, 'confirmed by a third crawl'));
      }
      return { outcomes, odd: x, note: `${x} outvoted (${reason})` };
    }
  }
  const credited = new Set<'a' | 'b' | 'c'>();
  for (const p of ['ab', 'ac', 'bc'] as const) if (v[p] === 'agree') for (const s of p.split('') as ('a' | 'b' | 'c')[]) credited.add(s);
  const outcomes: PartyOutcome[] = sides.map((s) => {
    const w = s === 'a' ? 1 : o.verifierCredit;
    return credited.has(s) && w > 0
      ? agreeOutcome(parties[s], at, w, 'agreed with one crawl of three')
      : { volunteer: parties[s].volunteer, outcome: { kind: 'inconclusive', at, taskId: parties[s].taskId, reason: 'no majority' } };
  });
  return { outcomes, odd: null, note: `no majority (ab ${v.ab}, ac ${v.ac}, bc ${v.bc})` };
}
