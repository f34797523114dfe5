// Outcomes of a check: the first comparison (subject and verifier) and, when
// they disagree, the third crawl that says who is wrong. A pairwise
// disagreement alone accuses nobody: it cannot tell the forger from its victim.
import { comparedText, type CrawlComparison, type Disagreement, type Verdict } from './compare.js';
import { DEFAULT_COMPARE, type CompareOptions, type DisagreementReason } from './compare-options.js';
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

/** An agreement on `p`'s crawl; `cmp` is the comparison that agreed (did it match text?). */
function agreeOutcome(p: CheckParty, at: number, weight: number, reason: string, cmp: Pick<CrawlComparison, 'counts'>): PartyOutcome {
  const text = comparedText(cmp) ? { comparedText: true } : {};
  return { volunteer: p.volunteer, outcome: { kind: 'agree', at, weight, taskId: p.taskId, uploadedAt: p.receivedAt, reason, ...text } };
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
    const outcomes = [agreeOutcome(a, at, 1, 'check agreed', cmp)];
    if (o.verifierCredit > 0) outcomes.push(agreeOutcome(b, at, o.verifierCredit, 'verification agreed', cmp));
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
  /** The odd crawl was outvoted on coverage alone (the others' content undecided). */
  onCoverage?: true;
  note: string;
}

function reasonsOf(cmp: CrawlComparison): string {
  return cmp.disagreements.map((d) => d.reason).join(', ');
}

/**
 * Breaks a disagreement between `a` and `b` with a third crawl `c`: the crawl
 * that both others disagree with, while those two agree with each other, is
 * the odd one out and takes a disagreement (weighted by the weaker of its two
 * comparisons); the two others are verified. Failing that, coverage is
 * judged on its own (`coverageMajority`): a crawl that missed the pages both
 * others found is outvoted on coverage, whatever the two others' texts say.
 * Any other pattern (all three differ; c agrees with both) accuses nobody: the
 * agreeing pairs are credited and the rest is inconclusive.
 */
export function resolveTieBreak(
  ab: CrawlComparison,
  ac: CrawlComparison,
  bc: CrawlComparison,
  parties: { a: CheckParty; b: CheckParty; c: CheckParty },
  at: number,
  options: Partial<SpotCheckOptions> | SpotCheckOptions = {},
  weights: CompareOptions['weights'] = DEFAULT_COMPARE.weights,
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
        if (y !== x && w > 0) outcomes.push(agreeOutcome(parties[y], at, w, 'confirmed by a third crawl', cmps[otherPair[x]]));
      }
      return { outcomes, odd: x, note: `${x} outvoted (${reason})` };
    }
  }
  const coverage = coverageMajority({ ab, ac, bc }, parties, at, weights);
  if (coverage !== null) return coverage;
  // Each side an agreeing pair holds is credited, with the agreeing comparison (one that matched text, if any).
  const credited = new Map<'a' | 'b' | 'c', CrawlComparison>();
  for (const p of ['ab', 'ac', 'bc'] as const) {
    if (v[p] !== 'agree') continue;
    for (const s of p.split('') as ('a' | 'b' | 'c')[]) if (!credited.has(s) || comparedText(cmps[p])) credited.set(s, cmps[p]);
  }
  const outcomes: PartyOutcome[] = sides.map((s) => {
    const w = s === 'a' ? 1 : o.verifierCredit;
    const by = credited.get(s);
    return by !== undefined && w > 0
      ? agreeOutcome(parties[s], at, w, 'agreed with one crawl of three', by)
      : { volunteer: parties[s].volunteer, outcome: { kind: 'inconclusive', at, taskId: parties[s].taskId, reason: 'no majority' } };
  });
  return { outcomes, odd: null, note: `no majority (ab ${v.ab}, ac ${v.ac}, bc ${v.bc})` };
}

// ---------------------------------------------------------------------------
// Coverage on its own

/** Disagreements about whether a crawl was made at all, not about what it found. */
const COVERAGE: ReadonlySet<DisagreementReason> = new Set<DisagreementReason>(['not-crawled', 'failure-claim']);

type Side = 'a' | 'b' | 'c';
type Pair = 'ab' | 'ac' | 'bc';

/** The coverage disagreements of pair `p` that point at party `x` (a comparison's side 'a' is the pair's first party). */
function coverageAgainst(cmp: CrawlComparison, p: Pair, x: Side): Disagreement[] {
  return cmp.disagreements.filter((d) => COVERAGE.has(d.reason) && d.side !== null && p[d.side === 'a' ? 0 : 1] === x);
}

function hasCoverageDispute(cmp: CrawlComparison): boolean {
  return cmp.disagreements.some((d) => COVERAGE.has(d.reason));
}

/** The weakest of the coverage evidence against a side (one weight per comparison, the strongest reason in each). */
function coverageWeight(lists: Disagreement[][], weights: CompareOptions['weights']): { weight: number; reason: string } {
  let best = { weight: Infinity, reason: '' };
  for (const ds of lists) {
    const w = Math.max(...ds.map((d) => weights[d.reason]));
    if (w < best.weight) best = { weight: w, reason: ds.map((d) => d.reason).join(', ') };
  }
  return best;
}

/**
 * Coverage judged apart from content. The `empty` volunteer of the benchmark
 * (tasks "completed" with no page) lost its tie-breaks whenever the verifier
 * and the third crawl agreed, but when one of them was a forger the two saw
 * every page and disagreed on their text: nobody was outvoted, and the empty
 * crawl, which both contradict, went free ("no majority": 5 of 14 third crawls
 * in one run of session 6). Two crawls that found the pages outvote the one
 * that missed them whatever their texts say: the party both of whose
 * comparisons carry a coverage disagreement against it (not-crawled,
 * failure-claim), while the two others have no coverage dispute between them,
 * takes a disagreement at the coverage weight; the text question between the
 * two others stays open (inconclusive for both: either may be the forger).
 * Null when no crawl is odd on coverage.
 */
export function coverageMajority(
  cmps: Record<Pair, CrawlComparison>,
  parties: { a: CheckParty; b: CheckParty; c: CheckParty },
  at: number,
  weights: CompareOptions['weights'] = DEFAULT_COMPARE.weights,
): TieBreak | null {
  const pairsOf = { a: ['ab', 'ac'], b: ['ab', 'bc'], c: ['ac', 'bc'] } as const;
  const otherPair = { a: 'bc', b: 'ac', c: 'ab' } as const;
  for (const x of ['a', 'b', 'c'] as const) {
    const [p1, p2] = pairsOf[x];
    const d1 = coverageAgainst(cmps[p1], p1, x);
    const d2 = coverageAgainst(cmps[p2], p2, x);
    if (d1.length === 0 || d2.length === 0 || hasCoverageDispute(cmps[otherPair[x]])) continue;
    const { weight, reason } = coverageWeight([d1, d2], weights);
    const outcomes: PartyOutcome[] = [{ volunteer: parties[x].volunteer, outcome: { kind: 'disagree', at, weight, taskId: parties[x].taskId, reason: `outvoted on coverage by two crawls that found the pages (${reason})` } }];
    for (const y of ['a', 'b', 'c'] as const) {
      if (y !== x) outcomes.push({ volunteer: parties[y].volunteer, outcome: { kind: 'inconclusive', at, taskId: parties[y].taskId, reason: 'found the pages a third crawl missed; content undecided' } });
    }
    return { outcomes, odd: x, onCoverage: true, note: `${x} outvoted on coverage (${reason}); ${otherPair[x]} ${cmps[otherPair[x]].verdict}` };
  }
  return null;
}

/** The subject's crawl and its verifier's disagree on coverage alone, against the subject. */
export function coverageDisputeOfSubject(ab: CrawlComparison): boolean {
  return ab.verdict === 'disagree' && ab.disagreements.length > 0 && coverageAgainst(ab, 'ab', 'a').length === ab.disagreements.length;
}

/**
 * A coverage dispute settled by a crawl the manager already holds instead of a
 * new third crawl. The subject `a` missed most of the pages its verifier `b`
 * found (`ab` carries only coverage disagreements against a), and a stored
 * crawl `c` of the channel by a third volunteer in good standing found pages
 * that a was told of and missed too (`ac` carries a coverage disagreement
 * against a), while b found the pages the stored crawl holds (`bc` has no
 * coverage dispute: a check crawl carries no known pages, so a verifier can
 * name them only by crawling the site): two crawls that found the pages
 * outvote the one that found none, as a third crawl would have, at the
 * coverage weight. Only coverage is
 * decided: a stored crawl can be older than the check, so what it says of
 * content is not used, and nobody is credited. Null when the dispute is not
 * one of coverage against the subject alone (a third crawl is needed then).
 */
export function resolveByStoredCrawl(
  ab: CrawlComparison,
  ac: CrawlComparison,
  bc: CrawlComparison,
  parties: { a: CheckParty; b: CheckParty; c: CheckParty },
  at: number,
  weights: CompareOptions['weights'] = DEFAULT_COMPARE.weights,
): TieBreak | null {
  if (!coverageDisputeOfSubject(ab) || hasCoverageDispute(bc)) return null;
  const onA = coverageAgainst(ab, 'ab', 'a');
  const storedOnA = coverageAgainst(ac, 'ac', 'a');
  if (storedOnA.length === 0) return null;
  const { weight, reason } = coverageWeight([onA, storedOnA], weights);
  return {
    outcomes: [
      { volunteer: parties.a.volunteer, outcome: { kind: 'disagree', at, weight, taskId: parties.a.taskId, reason: `outvoted on coverage by its verifier and a stored crawl of ${parties.c.volunteer} (${reason})` } },
      { volunteer: parties.b.volunteer, outcome: { kind: 'inconclusive', at, taskId: parties.b.taskId, reason: 'found the pages the subject missed; content not compared' } },
    ],
    odd: 'a',
    onCoverage: true,
    note: `a outvoted on coverage with a stored crawl (${reason})`,
  };
}
