// A new identity's first check (the intro): when it falls, when it is over,
// and who still owes one — a newcomer that owes its intro is the preferred
// verifier of another's check (verifier.ts), so that one crawl ends two intros.
//
// Pure: no I/O, no clock; randomness from an injected Rng.
import type { Rng } from '../../rng.js';
import { randomInt } from '../../rng.js';
import { DEFAULT_REPUTATION, type ReputationOptions } from './reputation-options.js';
import { reputationStatus, spotCheckRate, type ReputationRecord } from './reputation.js';
import { spotCheckOptions, type SpotCheckOptions } from './spot-check.js';

/** What the intro rules read of a reputation record. */
export interface IntroRecord {
  tasks?: number;
  textTasks?: number;
  introAt?: number;
  checked?: number;
  textAgreed?: number;
  totals: { disagree: number };
}

/**
 * Sampling at 7.4 % leaves a new forger unchecked for its first 9 tasks with
 * probability 0.50 and its first 30 with 0.10 (seen in the benchmark: a forger
 * finished 9 tasks with no check drawn). So a new identity's work is checked
 * once for sure early: at its `introAt`-th task **that stored page text**,
 * drawn uniformly from 1..introTasks when it is first seen and kept secret
 * (not in the API), so it cannot behave on that task alone. Counted in tasks
 * with text, because a crawl of unchanged pages gives a text forger nothing to
 * forge and its check nothing to compare: counted in all tasks (session 9), a
 * forger whose text came in its first tasks and whose drawn task fell among
 * text-less recrawls went 17 tasks without a check, 7 forged pages current.
 * Before it, the intro check replaces the sampled rate; from it, every task
 * with text is checked (one check in flight at a time; a task finishing while
 * one is pending leaves the intro owed, not spent) until a check of its crawl
 * **matched its page text** with another crawl's (an agreement on digests
 * alone says nothing of a text forger), or any check disagreed with it, or
 * introMaxChecks extra crawls were spent on it; then the adaptive rate. A
 * volunteer that stores no text in its first introTextlessTasks tasks is
 * checked then on any crawl (a digest echoer has no text to compare).
 *
 * 'before': the intro check is still to come (sample nothing);
 * 'due': check this task; 'over': the reputation's rate applies.
 */
export function introPhase(rec: IntroRecord, options: Partial<SpotCheckOptions> | SpotCheckOptions = {}): 'before' | 'due' | 'over' {
  const o = spotCheckOptions(options);
  if (o.introTasks === 0 || rec.introAt === undefined) return 'over';
  if ((rec.textAgreed ?? 0) > 0 || rec.totals.disagree > 0 || (rec.checked ?? 0) >= o.introMaxChecks) return 'over';
  const text = rec.textTasks ?? 0;
  if (text >= rec.introAt || introLate(rec, o)) return 'due';
  return text === 0 && (rec.tasks ?? 0) >= o.introTextlessTasks ? 'due' : 'before';
}

/** The probability that a finished task of this volunteer is drawn for a
 * check: 1 when its intro check is due; 0 while it is still to come, and for
 * the rest of its first introTasks tasks with text once it is over, while
 * nothing speaks against the volunteer (the intro check is the sampled rate's
 * share of those tasks); else the reputation's spotCheckRate. */
export function checkRate(rec: ReputationRecord, repOptions: ReputationOptions = DEFAULT_REPUTATION, options: Partial<SpotCheckOptions> | SpotCheckOptions = {}): number {
  const o = spotCheckOptions(options);
  const adaptive = spotCheckRate(rec, repOptions);
  const status = reputationStatus(rec, repOptions);
  const phase = introPhase(rec, o);
  if (phase === 'due') return status === 'quarantined' || status === 'banned' ? 0 : 1;
  if (status !== 'new' || rec.introAt === undefined) return adaptive;
  if (phase === 'before' || (rec.textTasks ?? 0) <= o.introTasks) return 0;
  return adaptive;
}

/**
 * Whether a task whose intro check is due is passed over: a crawl that stored
 * no page text (every page unchanged) gives a text forger nothing to forge, so
 * its check would compare digests only and say nothing of the volunteer's text
 * (seen in the benchmark: a forger's intro check fell on such a crawl, agreed,
 * and the forger then went unchecked for tens of tasks). The intro stays owed
 * for its next crawl with text; only a volunteer that has stored no text at
 * all is checked on a text-less crawl, once introTextlessTasks have passed.
 */
export function introPassesOver(rec: IntroRecord, storedTextPages: number, options: Partial<SpotCheckOptions> | SpotCheckOptions = {}): boolean {
  const o = spotCheckOptions(options);
  if (storedTextPages > 0 || rec.introAt === undefined) return false;
  return (rec.textTasks ?? 0) > 0 || (rec.tasks ?? 0) < o.introTextlessTasks;
}

/** Which of a new identity's first tasks gets its intro check (1-based), or undefined with introTasks 0. */
export function drawIntroAt(rng: Rng, options: Partial<SpotCheckOptions> | SpotCheckOptions = {}): number | undefined {
  const o = spotCheckOptions(options);
  return o.introTasks === 0 ? undefined : 1 + randomInt(rng, o.introTasks);
}

/**
 * Whether `rec` still owes its intro and may pay it as a verifier: a new
 * identity (not suspect, held, nor trusted) whose intro is not over and that
 * has stored page text at least once — a crawler that returns pages; the
 * benchmark's `empty` (no text ever) and `drop` (nothing ever) would make
 * their verifications disagree or vanish, each a third crawl or a lost check.
 *
 * The pairing rule (verifier.ts): a second crawl goes to such a newcomer, drawn
 * uniformly among them, while they are at least introPairMinShare of the
 * eligible verifiers. When its crawl matches the subject's page text, the
 * agreement ends both intros (tie-break.ts credits the verifier with
 * comparedText): ten newcomers pay about five intro crawls, not ten. What it
 * guarantees against two colluders that would vouch for each other's forgery:
 * they must still be drawn as each other's verifier, uniformly among m ≥
 * introPairMinShare·(n − 1) owing newcomers, so the chance is at most
 * 1/m ≤ 2/(n − 1) with the default 0.5 — no more than under the plain draw,
 * where either of the two intro checks may draw the other out of n − 1
 * (≈ 2/(n − 1)); a pair joining a network of settled volunteers is not paired
 * (the owing are too few a share) and gets the plain draw. It does not stop a
 * crowd of Sybils from being most of the owing pool — nor does the plain draw;
 * trusted verifiers still come first (verifier.ts), and every agreement
 * between colluders is open to the sampled checks that follow.
 */
export function owesIntro(rec: ReputationRecord, repOptions: ReputationOptions = DEFAULT_REPUTATION, options: Partial<SpotCheckOptions> | SpotCheckOptions = {}): boolean {
  if ((rec.textTasks ?? 0) === 0 || reputationStatus(rec, repOptions) !== 'new') return false;
  return introPhase(rec, options) !== 'over';
}

/**
 * Whether a newcomer's intro is late: it has stored text, its drawn crawl with
 * text has not come, and it has finished introLateTasks tasks (0: never). Then
 * the intro is due at once, and a text-less crawl of it is not passed over: the
 * check compares its newest crawl with text whose pages are still current
 * (late-intro.ts) — a forger with few crawls with text cannot wait out its
 * drawn one while its forged pages stay current.
 */
export function introLate(rec: IntroRecord, options: Partial<SpotCheckOptions> | SpotCheckOptions = {}): boolean {
  const o = spotCheckOptions(options);
  const text = rec.textTasks ?? 0;
  return o.introLateTasks > 0 && rec.introAt !== undefined && text > 0 && text < rec.introAt && (rec.tasks ?? 0) >= o.introLateTasks;
}
