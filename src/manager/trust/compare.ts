// Comparison of two crawls of the same channel by two volunteers.
//
// For every page both crawls saw, the probability that it changed between the
// two fetches comes from the channel's change rate (the estimator's Poisson
// rate r: P(no change in Δt) = e^{−rΔt}), made deliberately pessimistic — the
// rate is multiplied by `rateSafetyFactor` and a floor `pChangeFloor` stands for
// what the model does not know (A/B tests, pages faster than their channel) —
// and Δt is an upper bound built from trusted times (see `fetchWindow`).
//
// Page verdicts:
//  - identical / same-text / same-digest: the crawls agree on the page.
//  - contradiction: the same body digest with a different text, title, size or
//    noindex flag. One body gives one extraction, so two honest crawlers (of
//    one version) cannot produce this whatever the page did: strong evidence.
//  - volatile: the texts differ only in a few numbers (clocks, counters):
//    neither agreement nor disagreement.
//  - mismatch: the page differs although it should not have changed
//    (P(change) ≤ checkableMaxPChange). Counted, then tested as a whole.
//  - changed-consistent / changed-divergent / changed: the page may well have
//    changed in between: only what survives a change is looked at (same
//    title and length band, or not; `changed` when one side sent only the
//    digest), and nothing here ever counts against either volunteer.
//  - missing-a / missing-b: one crawl has the page, the other does not.
//
// Task verdict: `disagree` when the mismatches are too many for legitimate
// change (the number of mismatching checkable pages M has, for honest crawls,
// a Poisson-binomial law with the pages' change probabilities; disagree when
// P(M ≥ m) < alpha, and never for a single page, so one page that changed
// between the crawls can never make a disagreement), when there is a
// contradiction, when one crawl is missing most of what the other found
// (acknowledged but never crawled), when one claims failure while the other
// crawled the pages, or when one reports inter-site links the other never saw
// (SEO link injection). A pairwise disagreement does not say who is wrong:
// spot-check.ts breaks it with a third crawl.
//
// Pure: no I/O, no clock; all times are epoch ms passed in.
import type { PageRecord, TaskStatus } from '../../crawler/task.js';
import { poissonBinomialTail } from './stats.js';
import { digitOnlyDifferences, lengthRatio, normaliseText } from './text.js';
import { compareOptions, DEFAULT_COMPARE, type CompareOptions, type DisagreementReason } from './compare-options.js';

export { compareOptions, DEFAULT_COMPARE, DISAGREEMENT_REASONS, type CompareOptions, type DisagreementReason } from './compare-options.js';

/** What compare needs of an uploaded page (src/crawler's PageRecord fits). */
export type PageView = Pick<PageRecord, 'url' | 'digest' | 'text'> & Partial<Pick<PageRecord, 'title' | 'bytes' | 'noindex' | 'fetchedAt'>>;

/** One volunteer's crawl of the channel: every upload part of a task merged. */
export interface CrawlView {
  volunteer: string;
  taskId: string;
  status: TaskStatus;
  /** When the manager issued the task (manager clock, epoch ms): no fetch is earlier. */
  issuedAt: number;
  /** When the manager received the final part: no fetch is later. */
  receivedAt: number;
  /** Pages uploaded with their text. */
  pages: readonly PageView[];
  /** Every live page's digest (a page uploaded with text has one too). */
  validators: readonly { url: string; digest: number }[];
  /** Inter-site URLs the crawl reported. */
  interSiteUrls?: readonly string[];
  /** The URLs this crawl was asked to fetch directly (a sampled verification
   * task, depth 0). Absent for a crawl of the whole channel. */
  targets?: readonly string[];
  /** The pages of the channel the manager knew when it judged this crawl (its
   * store's, this crawl's own included). A crawler does not parse a page whose
   * digest it was given and finds unchanged (its links are the ones found last
   * time), so an incremental crawl reaches what the known list holds and what
   * changed pages link to: its coverage is judged on these pages alone. Absent
   * or empty: a crawl from scratch, judged on everything the other found. */
  known?: readonly string[];
}

/** The channel's change history, as the manager's estimator gives it. */
export interface ChangeModel {
  /** Estimated changes per page per minute (estimateChangeRate); null when unknown. */
  ratePerMinute: number | null;
  /** Per-page rates where the manager's history has them (changes per minute). */
  pageRatesPerMinute?: Readonly<Record<string, number>>;
}


export const PAGE_KINDS = [
  'identical',
  'same-text',
  'same-digest',
  'contradiction',
  'volatile',
  'mismatch',
  'changed-consistent',
  'changed-divergent',
  'changed',
  'missing-a',
  'missing-b',
] as const;
export type PageKind = (typeof PAGE_KINDS)[number];
const AGREEING: ReadonlySet<PageKind> = new Set(['identical', 'same-text', 'same-digest']);

export interface PageComparison {
  url: string;
  kind: PageKind;
  /** Upper bound on the time between the two fetches, ms (NaN when one crawl lacks the page). */
  gapMs: number;
  /** Probability that the page changed in that time (pessimistic). */
  pChange: number;
  /** One side's text is empty while the other's is not (empty-page forgery). */
  emptySide?: 'a' | 'b';
}

export interface Disagreement {
  reason: DisagreementReason;
  /** The side the evidence points at, when the evidence itself says so; null when only a third crawl can tell. */
  side: 'a' | 'b' | null;
  detail: string;
}

export type Verdict = 'agree' | 'disagree' | 'inconclusive';

export interface CrawlComparison {
  verdict: Verdict;
  /** Evidence weight for reputation: the heaviest reason's weight (1 for an agreement). */
  weight: number;
  disagreements: Disagreement[];
  /** Why an inconclusive comparison is one. */
  note?: string;
  counts: Record<PageKind, number>;
  /** Checkable pages (the mismatch test's trials), their mismatches, the
   * expected number of legitimate mismatches and P(M ≥ mismatches). */
  trials: number;
  mismatches: number;
  expectedMismatches: number;
  pValue: number;
  pages: PageComparison[];
}

const SUCCESS: ReadonlySet<TaskStatus> = new Set<TaskStatus>(['completed', 'page-cap', 'deadline']);

/** Whether the comparison matched page text on both sides — not digests alone:
 * only such an agreement says anything of a volunteer's text (a text forger
 * keeps the true digests). */
export function comparedText(cmp: Pick<CrawlComparison, 'counts'>): boolean {
  return (['identical', 'same-text', 'volatile'] as const).some((k) => (cmp.counts[k] ?? 0) > 0);
}

interface Entry {
  digest: number;
  page?: PageView;
}

function entries(c: CrawlView): Map<string, Entry> {
  const m = new Map<string, Entry>();
  for (const v of c.validators) m.set(v.url, { digest: v.digest });
  for (const p of c.pages) m.set(p.url, { digest: p.digest, page: p });
  return m;
}

/** The time interval a crawl's fetch of a page lies in: the crawl's trusted
 * window [issuedAt, receivedAt], narrowed to the claimed fetch time ± clock
 * skew when there is one. A volunteer can only move its claimed time inside
 * its own window, so a lie can shrink a gap by no more than that window. */
export function fetchWindow(c: CrawlView, fetchedAt: number | undefined, skewMs: number): [number, number] {
  const lo = c.issuedAt;
  const hi = Math.max(c.issuedAt, c.receivedAt);
  if (fetchedAt === undefined || !Number.isFinite(fetchedAt)) return [lo, hi];
  const t = Math.min(hi, Math.max(lo, fetchedAt));
  return [Math.max(lo, t - skewMs), Math.min(hi, t + skewMs)];
}

/** Probability that a page changed within gapMs: 1 − (1 − floor)·e^{−k·r·Δt}. */
export function changeProbability(ratePerMinute: number, gapMs: number, o: CompareOptions = DEFAULT_COMPARE): number {
  const r = Math.max(0, ratePerMinute) * o.rateSafetyFactor;
  return 1 - (1 - o.pChangeFloor) * Math.exp(-r * (Math.max(0, gapMs) / 60_000));
}

function rateOf(url: string, change: ChangeModel, o: CompareOptions): { rate: number; perPage: boolean } {
  const own = change.pageRatesPerMinute?.[url];
  if (own !== undefined && Number.isFinite(own) && own >= 0) return { rate: own, perPage: true };
  const ch = change.ratePerMinute;
  return { rate: ch !== null && Number.isFinite(ch) && ch >= 0 ? ch : o.unknownRatePerMinute, perPage: false };
}

function comparePage(url: string, ea: Entry, eb: Entry, a: CrawlView, b: CrawlView, change: ChangeModel, o: CompareOptions): PageComparison {
  const [aLo, aHi] = fetchWindow(a, ea.page?.fetchedAt, o.clockSkewMs);
  const [bLo, bHi] = fetchWindow(b, eb.page?.fetchedAt, o.clockSkewMs);
  const gapMs = Math.max(0, bHi - aLo, aHi - bLo);
  const { rate, perPage } = rateOf(url, change, o);
  const pChange = changeProbability(rate, gapMs, o);
  const checkable = pChange <= o.checkableMaxPChange;
  const out = (kind: PageKind, emptySide?: 'a' | 'b'): PageComparison => (emptySide ? { url, kind, gapMs, pChange, emptySide } : { url, kind, gapMs, pChange });
  const pa = ea.page;
  const pb = eb.page;
  if (pa === undefined || pb === undefined) {
    // At least one side reported only the digest (an unchanged page).
    if (ea.digest === eb.digest) return out('same-digest');
    return out(checkable ? 'mismatch' : 'changed');
  }
  const ta = normaliseText(pa.text);
  const tb = normaliseText(pb.text);
  const titleA = normaliseText(pa.title ?? '');
  const titleB = normaliseText(pb.title ?? '');
  const emptySide = ta === '' && tb !== '' ? 'a' : tb === '' && ta !== '' ? 'b' : undefined;
  if (ea.digest === eb.digest) {
    const sameExtraction =
      ta === tb &&
      (pa.title === undefined || pb.title === undefined || titleA === titleB) &&
      (pa.bytes === undefined || pb.bytes === undefined || pa.bytes === pb.bytes) &&
      (pa.noindex ?? false) === (pb.noindex ?? false);
    return sameExtraction ? out('identical') : out('contradiction', emptySide);
  }
  if (ta === tb && titleA === titleB) return out('same-text');
  const strict = perPage && pChange <= o.strictDigitsMaxPChange;
  if (!strict) {
    const dText = digitOnlyDifferences(ta, tb);
    const dTitle = digitOnlyDifferences(titleA, titleB);
    if (dText !== null && dTitle !== null && dText + dTitle <= o.maxVolatileWords) return out('volatile');
  }
  if (checkable) return out('mismatch', emptySide);
  const consistent = titleA === titleB && lengthRatio(ta.length, tb.length) >= o.changedLengthRatio;
  return out(consistent ? 'changed-consistent' : 'changed-divergent', emptySide);
}

function emptyCounts(): Record<PageKind, number> {
  const c = {} as Record<PageKind, number>;
  for (const k of PAGE_KINDS) c[k] = 0;
  return c;
}

/** Compares crawl `a` with crawl `b` of the same channel. */
export function compareCrawls(a: CrawlView, b: CrawlView, change: ChangeModel, options: Partial<CompareOptions> | CompareOptions = {}): CrawlComparison {
  const o = compareOptions(options);
  const counts = emptyCounts();
  const pages: PageComparison[] = [];
  const disagreements: Disagreement[] = [];
  const result = (verdict: Verdict, extra: Partial<CrawlComparison> = {}): CrawlComparison => {
    const weight = verdict === 'disagree' ? Math.max(...disagreements.map((d) => o.weights[d.reason])) : verdict === 'agree' ? 1 : 0;
    return { verdict, weight, disagreements, counts, trials: 0, mismatches: 0, expectedMismatches: 0, pValue: 1, pages, ...extra };
  };

  const ea = entries(a);
  const eb = entries(b);
  const okA = SUCCESS.has(a.status);
  const okB = SUCCESS.has(b.status);
  if (a.status === 'cancelled' || b.status === 'cancelled') return result('inconclusive', { note: 'a task was cancelled before it ran' });
  if (!okA && !okB) return result('inconclusive', { note: `both crawls failed (${a.status}, ${b.status})` });
  if (okA !== okB) {
    const [failed, found, side] = okA ? [b, ea, 'b' as const] : [a, eb, 'a' as const];
    if (found.size === 0) return result('inconclusive', { note: `${failed.status} against a crawl that found nothing` });
    disagreements.push({ reason: 'failure-claim', side, detail: `${side} reported ${failed.status} while the other crawl found ${found.size} pages` });
    return result('disagree');
  }

  // Which URLs each side was expected to have: the whole channel, or its targets.
  const inScope = (c: CrawlView, url: string): boolean => c.targets === undefined || c.targets.includes(url);
  const urls = new Set<string>();
  for (const u of ea.keys()) if (inScope(b, u)) urls.add(u);
  for (const u of eb.keys()) if (inScope(a, u)) urls.add(u);
  const sorted = [...urls].sort();

  const trialPs: number[] = [];
  let mismatches = 0;
  let emptyA = 0;
  let emptyB = 0;
  for (const url of sorted) {
    const x = ea.get(url);
    const y = eb.get(url);
    let pc: PageComparison;
    if (x === undefined) pc = { url, kind: 'missing-a', gapMs: NaN, pChange: NaN };
    else if (y === undefined) pc = { url, kind: 'missing-b', gapMs: NaN, pChange: NaN };
    else pc = comparePage(url, x, y, a, b, change, o);
    counts[pc.kind]++;
    pages.push(pc);
    if (pc.emptySide === 'a' && (pc.kind === 'mismatch' || pc.kind === 'contradiction')) emptyA++;
    if (pc.emptySide === 'b' && (pc.kind === 'mismatch' || pc.kind === 'contradiction')) emptyB++;
    if (AGREEING.has(pc.kind) || pc.kind === 'mismatch') {
      if (pc.pChange <= o.checkableMaxPChange) {
        trialPs.push(pc.pChange);
        if (pc.kind === 'mismatch') mismatches++;
      }
    }
  }
  const emptyNote = (): string => (emptyA + emptyB > 0 ? ` (${emptyA > 0 ? `${emptyA} empty in a` : ''}${emptyA > 0 && emptyB > 0 ? ', ' : ''}${emptyB > 0 ? `${emptyB} empty in b` : ''})` : '');

  // Content: contradictions, then the mismatch count against legitimate change.
  if (counts.contradiction > 0) {
    disagreements.push({ reason: 'contradiction', side: null, detail: `${counts.contradiction} pages with the same body digest and a different text, title or size${emptyNote()}` });
  }
  let expected = 0;
  for (const p of trialPs) expected += p;
  const pValue = poissonBinomialTail(trialPs, mismatches);
  if (mismatches >= o.minMismatches && pValue < o.alpha) {
    disagreements.push({
      reason: 'mismatch',
      side: null,
      detail: `${mismatches} of ${trialPs.length} pages differ that should not have changed (expected ${expected.toFixed(2)}, P = ${pValue.toExponential(2)})${emptyNote()}`,
    });
  }

  // Coverage: a completed crawl missing most of what the other found was not
  // really crawled (page-cap and deadline crawls stop early legitimately).
  const coverage = (self: CrawlView, side: 'a' | 'b', missing: number, otherFound: number, ownFound: number): void => {
    if (self.status !== 'completed' || otherFound === 0) return;
    if ((missing >= o.minMissing || ownFound === 0) && missing / otherFound > 1 - o.minCoverage) {
      disagreements.push({ reason: 'not-crawled', side, detail: `${side} is missing ${missing} of the ${otherFound} pages the other crawl found` });
    }
  };
  // Each side's coverage over the pages it could be expected to reach (`known`).
  const reach = (self: CrawlView, side: 'a' | 'b'): void => {
    const known = self.known !== undefined && self.known.length > 0 ? new Set(self.known) : null;
    const [mine, theirs] = side === 'a' ? [ea, eb] : [eb, ea];
    let missing = 0;
    let otherFound = 0;
    let ownFound = 0;
    for (const u of sorted) {
      if (known !== null && !known.has(u)) continue;
      if (theirs.has(u)) otherFound++;
      if (mine.has(u)) ownFound++;
      else missing++;
    }
    coverage(self, side, missing, otherFound, ownFound);
  };
  reach(a, 'a');
  reach(b, 'b');

  // Inter-site links only one crawl reported, when both crawled the whole
  // channel and the pages barely changed in between.
  if (a.targets === undefined && b.targets === undefined && a.interSiteUrls !== undefined && b.interSiteUrls !== undefined) {
    const sa = new Set(a.interSiteUrls);
    const sb = new Set(b.interSiteUrls);
    const changedPages = counts['changed-consistent'] + counts['changed-divergent'] + counts.changed;
    const stable = expected + changedPages <= 1;
    for (const [self, other, side] of [[sa, sb, 'a'], [sb, sa, 'b']] as const) {
      let extra = 0;
      for (const u of self) if (!other.has(u)) extra++;
      if (stable && extra >= o.minInjectedLinks && extra > 0.5 * self.size) {
        disagreements.push({ reason: 'injected-links', side, detail: `${side} reported ${extra} inter-site URLs the other crawl never saw` });
      }
    }
  }

  const stats = { trials: trialPs.length, mismatches, expectedMismatches: expected, pValue };
  if (disagreements.length > 0) return result('disagree', stats);
  const agreeing = counts.identical + counts['same-text'] + counts['same-digest'];
  if (agreeing === 0) return result('inconclusive', { ...stats, note: sorted.length === 0 ? 'neither crawl found a page' : 'no page could be compared' });
  return result('agree', stats);
}
