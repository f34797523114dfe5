// Spot-check policy: which completed tasks are crawled a second time, when
// and over which pages, and what the checks cost.
//
// Which: a completed task is re-checked with its volunteer's spot-check rate
// (reputation.ts: 7.4 % for a new identity, falling to 2 % for a long-trusted
// one, every task of a suspect — BOINC's adaptive replication), decided only
// after the upload so the volunteer cannot tell at crawl time which of its
// tasks will be checked. Two anomalies are checked always, whatever the
// reputation: a completed crawl with no live page on a channel whose history
// has pages (acknowledged but never crawled), and more changed pages than the
// channel's change rate makes believable (a forger must fake new digests to
// upload text for pages that did not change).
//
// A new identity's first check: intro.ts. By whom: verifier.ts. Who a third
// crawl outvotes: tie-break.ts.
//
// When: right away, with a deadline by which an unchanged page stays unchanged
// with probability pUnchangedTarget (e^{−k·r·Δt} ≥ target): the shorter the
// gap, the more pages compare.ts can judge.
//
// Pure: no I/O, no clock (times are passed in), randomness from an injected Rng.
import type { TaskStatus } from '../../crawler/task.js';
import type { Rng } from '../../rng.js';
import { randomInt } from '../../rng.js';
import { DEFAULT_REPUTATION, type ReputationOptions } from './reputation-options.js';
import { newReputation, reputationStatus, spotCheckRate } from './reputation.js';
import { binomialTail, poissonBinomialTail } from './stats.js';
import { mergeOptions, optionChecker } from '../../options.js';

export interface SpotCheckOptions {
  /** Anomaly test: check a task whose changed pages are this improbable under the channel's rate. */
  anomalyAlpha: number;
  /** A completed crawl with no live page on a channel that had at least this many pages is always checked. */
  minKnownPagesForEmpty: number;
  /** The check should end while an unchanged page is still unchanged with this probability. */
  pUnchangedTarget: number;
  /** Rate multiplier (the same pessimism as compare.ts). */
  rateSafetyFactor: number;
  /** Rate assumed for a channel without history (changes per page per minute). */
  unknownRatePerMinute: number;
  /** Earliest start of a check after the upload (a pause for the web host), ms. */
  minDelayMs: number;
  /** Latest end of a check for a channel that (almost) never changes, ms after the upload. */
  maxDelayMs: number;
  /** Channels up to this many live pages are re-crawled whole; larger ones on a sample. */
  fullCrawlMaxPages: number;
  /** Pages in a sampled check (half from the pages uploaded with text). */
  samplePages: number;
  /** Coordinates at least this far apart (ms) are different regions. */
  minRegionDistanceMs: number;
  /** Agreement weight a verifier earns for a crawl that matched (0 = none). */
  verifierCredit: number;
  /** A new identity's work is checked once for sure within its first this many
   * tasks that stored page text (at a uniformly drawn one of them), instead of
   * by the sampled rate. */
  introTasks: number;
  /** ... and again on its next task with text while that check compared no text
   * (nor disagreed), up to this many extra crawls. */
  introMaxChecks: number;
  /** A new identity that stored no page text in this many tasks gets its intro
   * check on any crawl (one that echoes digests and never uploads text). */
  introTextlessTasks: number;
  /** A new identity that stored text but has not reached its drawn crawl with text
   * in this many tasks gets its intro check on its newest crawl with text still
   * current (intro.ts's introLate; 0: never). */
  introLateTasks: number;
  /** A second crawl goes preferably to a newcomer that still owes its intro (its
   * matching crawl ends its intro too: one crawl, evidence on both) while such
   * newcomers are at least this share of the eligible verifiers (intro.ts's
   * pairing rule; 0: never preferred, the plain draw). */
  introPairMinShare: number;
  /** A second crawl, too, prefers a volunteer that has delivered pages (verifier.ts). Off by
   * default: a check crawl drawn to a volunteer with no record is also how one that routing
   * gives no task of its own gets caught (session 12: a forger with 0 tasks, caught verifying). */
  secondCrawlPrefersDelivered: boolean;
  /** A coverage dispute (the subject missed the pages its verifier found) is settled
   * by a stored crawl of the channel by a third volunteer in good standing, when the
   * pages it saw were seen no longer than this before the subject's task was issued,
   * instead of a third crawl (ms; 0: always a third crawl). */
  storedCrawlMaxAgeMs: number;
  /** A due intro check passes with no second crawl when every page with text of the
   * crawl matches, body for body, the extraction an earlier crawl by another vouched-for
   * volunteer stored (text-refs.ts); otherwise the second crawl is issued as before. */
  introByStoredText: boolean;
  /** A contradiction between a subject and its verifier is settled by earlier crawls of
   * the same page bodies by a third vouched-for volunteer instead of a third crawl, when
   * they all side with one of the two (text-refs.ts). */
  textTieBreakByStored: boolean;
}

export const DEFAULT_SPOT_CHECK: Readonly<SpotCheckOptions> = Object.freeze({
  anomalyAlpha: 1e-3,
  minKnownPagesForEmpty: 1,
  pUnchangedTarget: 0.9,
  rateSafetyFactor: 2,
  unknownRatePerMinute: 1 / 30,
  minDelayMs: 0,
  maxDelayMs: 3_600_000,
  fullCrawlMaxPages: 200,
  samplePages: 50,
  minRegionDistanceMs: 20,
  verifierCredit: 1,
  introTasks: 4,
  introMaxChecks: 3,
  introTextlessTasks: 20,
  introPairMinShare: 0.5,
  secondCrawlPrefersDelivered: false,
  introLateTasks: 3,
  storedCrawlMaxAgeMs: 7 * 86_400_000,
  // Off: in the session-13 runs neither ever fired (every intro fell on a channel's first
  // crawl, whose bodies nobody else had seen), and both are weaker against colluders than
  // the crawls they replace (docs/trust.md).
  introByStoredText: false,
  textTieBreakByStored: false,
});

/** Defaults merged with `partial`, validated; throws RangeError naming the bad option. */
export function spotCheckOptions(partial: Partial<SpotCheckOptions> = {}): SpotCheckOptions {
  const o = mergeOptions<SpotCheckOptions>('spotCheckOptions', DEFAULT_SPOT_CHECK, partial);
  const check = optionChecker('spotCheckOptions');
  check(Number.isFinite(o.anomalyAlpha) && o.anomalyAlpha > 0 && o.anomalyAlpha < 1, `anomalyAlpha must be in (0, 1), got ${o.anomalyAlpha}`);
  check(Number.isInteger(o.minKnownPagesForEmpty) && o.minKnownPagesForEmpty >= 1, `minKnownPagesForEmpty must be an integer >= 1`);
  check(Number.isFinite(o.pUnchangedTarget) && o.pUnchangedTarget > 0 && o.pUnchangedTarget < 1, `pUnchangedTarget must be in (0, 1), got ${o.pUnchangedTarget}`);
  check(Number.isFinite(o.rateSafetyFactor) && o.rateSafetyFactor >= 1, `rateSafetyFactor must be >= 1, got ${o.rateSafetyFactor}`);
  check(Number.isFinite(o.unknownRatePerMinute) && o.unknownRatePerMinute >= 0, `unknownRatePerMinute must be >= 0`);
  check(Number.isFinite(o.minDelayMs) && o.minDelayMs >= 0, `minDelayMs must be >= 0, got ${o.minDelayMs}`);
  check(Number.isFinite(o.maxDelayMs) && o.maxDelayMs > o.minDelayMs, `maxDelayMs must be > minDelayMs, got ${o.maxDelayMs}`);
  check(Number.isInteger(o.fullCrawlMaxPages) && o.fullCrawlMaxPages >= 1, `fullCrawlMaxPages must be an integer >= 1`);
  check(Number.isInteger(o.samplePages) && o.samplePages >= 2, `samplePages must be an integer >= 2`);
  check(Number.isFinite(o.minRegionDistanceMs) && o.minRegionDistanceMs >= 0, `minRegionDistanceMs must be >= 0`);
  check(Number.isFinite(o.verifierCredit) && o.verifierCredit >= 0, `verifierCredit must be >= 0`);
  check(Number.isInteger(o.introTasks) && o.introTasks >= 0, `introTasks must be an integer >= 0 (0: no introductory check), got ${o.introTasks}`);
  check(Number.isInteger(o.introMaxChecks) && o.introMaxChecks >= 1, `introMaxChecks must be an integer >= 1, got ${o.introMaxChecks}`);
  check(Number.isInteger(o.introTextlessTasks) && o.introTextlessTasks >= 1, `introTextlessTasks must be an integer >= 1, got ${o.introTextlessTasks}`);
  check(Number.isInteger(o.introLateTasks) && o.introLateTasks >= 0, `introLateTasks must be an integer >= 0 (0: never), got ${o.introLateTasks}`);
  check(typeof o.secondCrawlPrefersDelivered === 'boolean', `secondCrawlPrefersDelivered must be a boolean, got ${String(o.secondCrawlPrefersDelivered)}`);
  check(Number.isFinite(o.introPairMinShare) && o.introPairMinShare >= 0 && o.introPairMinShare <= 1, `introPairMinShare must be in [0, 1] (0: no pairing), got ${o.introPairMinShare}`);
  check(Number.isFinite(o.storedCrawlMaxAgeMs) && o.storedCrawlMaxAgeMs >= 0, `storedCrawlMaxAgeMs must be >= 0 (0: never), got ${o.storedCrawlMaxAgeMs}`);
  check(typeof o.introByStoredText === 'boolean', `introByStoredText must be a boolean, got ${String(o.introByStoredText)}`);
  check(typeof o.textTieBreakByStored === 'boolean', `textTieBreakByStored must be a boolean, got ${String(o.textTieBreakByStored)}`);
  return o;
}

// ---------------------------------------------------------------------------
// Which tasks

/** What the manager knows of a task when its final part arrives. */
export interface CompletedTask {
  taskId: string;
  volunteer: string;
  status: TaskStatus;
  issuedAt: number;
  receivedAt: number;
  /** Live pages in the result (validators). */
  livePages: number;
  /** Pages the channel's history knows (the task's `known`). */
  knownPages: number;
  /** Known pages seen again, and how many of them came back with a new digest. */
  revisited: number;
  changedOfRevisited: number;
  /** Minutes since the channel's previous successful crawl (null: first crawl). */
  sinceLastCrawlMinutes: number | null;
  /** Per revisited page, when the manager has per-page history: the
   * probability it expected the page to have changed since its last visit
   * (1 for a page that changes on every visit), and whether it did. Without
   * it the channel's rate is used for every page, which over-counts anomalies
   * on channels with pages that change at every fetch. */
  revisits?: readonly { pChange: number; changed: boolean }[];
  /** The channel's estimated change rate per page per minute (null: unknown). */
  ratePerMinute: number | null;
}

export type CheckReason = 'anomaly-empty' | 'anomaly-changes' | 'sampled' | 'intro' | 'intro-late' | 'failure-claim';

export interface SpotCheckDecision {
  check: boolean;
  /** Why it is checked (or would have been: 'sampled' with check false when the draw said no). */
  reason: CheckReason;
  /** The probability the draw used (1 for anomalies). */
  probability: number;
  /** P-value of the changed-pages anomaly test, when there was one. */
  anomalyP?: number;
}

const SUCCESS: ReadonlySet<TaskStatus> = new Set<TaskStatus>(['completed', 'page-cap', 'deadline']);

/**
 * Decides whether a finished task is checked. `rate` is the volunteer's
 * spot-check rate (reputation.ts's spotCheckRate). A task that ended in
 * failure is drawn at the same rate (reason 'failure-claim'): when the manager
 * retries it anyway, the retry is the check and costs nothing extra.
 */
export function decideSpotCheck(task: CompletedTask, rate: number, rng: Rng, options: Partial<SpotCheckOptions> | SpotCheckOptions = {}): SpotCheckDecision {
  const o = spotCheckOptions(options);
  if (!(rate >= 0 && rate <= 1)) throw new RangeError(`decideSpotCheck: rate must be in [0, 1], got ${rate}`);
  if (!SUCCESS.has(task.status)) {
    if (task.status === 'cancelled') return { check: false, reason: 'failure-claim', probability: 0 };
    return { check: rng.next() < rate, reason: 'failure-claim', probability: rate };
  }
  if (task.status === 'completed' && task.livePages === 0 && task.knownPages >= o.minKnownPagesForEmpty) {
    return { check: true, reason: 'anomaly-empty', probability: 1 };
  }
  const p = changedPagesPValue(task, o);
  if (p !== null && p < o.anomalyAlpha) return { check: true, reason: 'anomaly-changes', probability: 1, anomalyP: p };
  return { check: rng.next() < rate, reason: 'sampled', probability: rate };
}

/** P(at least this many revisited pages changed | honest crawl), or null when there is nothing to test. */
function changedPagesPValue(task: CompletedTask, o: SpotCheckOptions): number | null {
  if (task.revisits !== undefined) {
    const ps: number[] = [];
    let changed = 0;
    for (const r of task.revisits) {
      ps.push(Math.min(1, Math.max(0, 1 - (1 - r.pChange) ** o.rateSafetyFactor)));
      if (r.changed) changed++;
    }
    return changed > 0 ? poissonBinomialTail(ps, changed) : null;
  }
  if (task.revisited > 0 && task.changedOfRevisited > 0 && task.sinceLastCrawlMinutes !== null && task.sinceLastCrawlMinutes > 0) {
    const r = (task.ratePerMinute ?? o.unknownRatePerMinute) * o.rateSafetyFactor;
    const pChange = 1 - Math.exp(-r * task.sinceLastCrawlMinutes);
    return binomialTail(task.revisited, Math.min(1, pChange), task.changedOfRevisited);
  }
  return null;
}

// ---------------------------------------------------------------------------
// When, and over which pages

export interface CheckWindow {
  /** Issue the check no earlier than this (epoch ms). */
  notBefore: number;
  /** Its result is worth most if received by this (epoch ms); the check task's deadline. */
  deadline: number;
  /** Probability that a page is still unchanged at the deadline, relative to the first crawl's start. */
  pUnchanged: number;
  /** False when even an immediate check cannot finish inside the window
   * (the channel changes too fast for its crawl duration): skip, or sample. */
  feasible: boolean;
}

/**
 * The window for the check of `task`, issued at `now`: its result should be in
 * before pages are likely to change, counted from the first crawl's start
 * (compare.ts bounds the gap between the fetches by the two trusted windows).
 * `expectedCrawlMs` is how long the check crawl will take (the first crawl's
 * duration for a whole-channel check).
 */
export function checkWindow(task: Pick<CompletedTask, 'issuedAt' | 'receivedAt' | 'ratePerMinute'>, now: number, expectedCrawlMs: number, options: Partial<SpotCheckOptions> | SpotCheckOptions = {}): CheckWindow {
  const o = spotCheckOptions(options);
  const notBefore = Math.max(now, task.receivedAt + o.minDelayMs);
  const r = (task.ratePerMinute ?? o.unknownRatePerMinute) * o.rateSafetyFactor;
  const maxGapMs = r > 0 ? (-Math.log(o.pUnchangedTarget) / r) * 60_000 : Infinity;
  const deadline = Math.min(task.issuedAt + maxGapMs, task.receivedAt + o.maxDelayMs);
  const pUnchanged = Math.exp(-r * ((deadline - task.issuedAt) / 60_000));
  return { notBefore, deadline, pUnchanged, feasible: notBefore + Math.max(0, expectedCrawlMs) <= deadline };
}

export type CheckScope = { kind: 'full' } | { kind: 'sample'; urls: string[] };

/** Samples k distinct items (partial Fisher–Yates on a copy). */
function sample<T>(items: readonly T[], k: number, rng: Rng): T[] {
  const a = [...items];
  const n = Math.min(k, a.length);
  for (let i = 0; i < n; i++) {
    const j = i + randomInt(rng, a.length - i);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, n);
}

/**
 * Whole channel when it is small; else a sample of pages fetched directly:
 * half from the pages the volunteer uploaded with text (what would become
 * current versions), the rest from its other live pages and from pages the
 * channel's history knows that the volunteer did not report.
 */
export function checkScope(
  result: { uploaded: readonly string[]; otherLive: readonly string[]; knownNotReported: readonly string[] },
  rng: Rng,
  options: Partial<SpotCheckOptions> | SpotCheckOptions = {},
): CheckScope {
  const o = spotCheckOptions(options);
  const live = result.uploaded.length + result.otherLive.length;
  if (live <= o.fullCrawlMaxPages) return { kind: 'full' };
  const fromUploaded = sample(result.uploaded, Math.ceil(o.samplePages / 2), rng);
  const rest = sample([...result.otherLive, ...result.knownNotReported], o.samplePages - fromUploaded.length, rng);
  return { kind: 'sample', urls: [...fromUploaded, ...rest].sort() };
}

// ---------------------------------------------------------------------------
// Cost

/** Task counts for the verification overhead (the "extra tasks ÷ tasks"). */
export interface OverheadCounts {
  /** Tasks issued for the crawl schedule itself. */
  primary: number;
  /** Second crawls issued as checks. */
  spotChecks: number;
  /** Third crawls issued to break a disagreement. */
  tieBreaks: number;
  /** Re-crawls of a quarantined volunteer's unverified uploads (reported apart:
   * the cost of an attack, not of checking). */
  recrawls: number;
}

export function verificationOverhead(c: OverheadCounts): number {
  return c.primary > 0 ? (c.spotChecks + c.tieBreaks) / c.primary : 0;
}

/**
 * Expected verification overhead of one honest volunteer over its first
 * `tasks` tasks (mean field, the intro check spread over the tasks that hold
 * its first introTasks crawls with text — introTasks ÷ textShare tasks, where
 * `textShare` is the share of its tasks that store text: each task adds its expected number of checks to
 * the evidence as fractional agreements). With a verifier credit, it also
 * verifies as many tasks of others as it has had checked (a population of
 * peers at the same stage), earning the credit for each. Returns the running
 * overhead after each task and the task after which it is trusted (null if
 * never within `tasks`).
 */
export function expectedHonestOverhead(
  tasks: number,
  repOptions: ReputationOptions = DEFAULT_REPUTATION,
  options: Partial<SpotCheckOptions> | SpotCheckOptions = {},
  textShare = 1,
): { overhead: number[]; trustedAfter: number | null } {
  const o = spotCheckOptions(options);
  if (!(textShare > 0 && textShare <= 1)) throw new RangeError(`expectedHonestOverhead: textShare must be in (0, 1], got ${textShare}`);
  const introSpan = o.introTasks / textShare;
  let rec = newReputation('model', 0);
  let checks = 0;
  let trustedAfter: number | null = null;
  const overhead: number[] = [];
  for (let t = 1; t <= tasks; t++) {
    // The intro check falls on each of the first introTasks ÷ textShare tasks alike.
    const rate = t <= introSpan ? Math.min(1, introSpan - (t - 1)) / introSpan : spotCheckRate(rec, repOptions);
    checks += rate;
    const gained = rate * (1 + o.verifierCredit);
    const decay = repOptions.decay ** gained;
    rec = { ...rec, agree: rec.agree * decay + gained, disagree: rec.disagree * decay };
    if (trustedAfter === null && reputationStatus(rec, repOptions) === 'trusted') trustedAfter = t;
    overhead.push(checks / t);
  }
  return { overhead, trustedAfter };
}
