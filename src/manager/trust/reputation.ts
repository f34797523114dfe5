// Reputation of a volunteer identity (a libp2p peer id): what its spot checks
// said, turned into a status and the rate at which its work is re-checked.
//
// The rule. Let q be the probability that a check of this volunteer's work
// ends in a confirmed disagreement. The evidence is a weighted count of
// agreements a and disagreements d, and the belief about q is the Beta
// posterior Beta(priorDisagree + d, priorAgree + a). The prior is uniform
// (Beta(1, 1)): a new identity could be anything — P(q > 0.1) = 0.9 — so it is
// checked often until its own work says otherwise, and an identity that comes
// back under a new key starts there again.
//
//  - quarantined when P(q > badRate) ≥ quarantineConfidence: "95 % sure that
//    more than a quarter of its checked work is wrong". With the uniform prior
//    a new identity is quarantined by its second confirmed disagreement
//    (Beta(3, 1): P(q > 0.25) = 1 − 0.25³ = 0.984) but not by its first
//    (Beta(2, 1): 1 − 0.25² = 0.9375), so one unlucky check never does it.
//  - suspect while P(q > badRate) ≥ suspectConfidence, and for the next
//    probationChecks checks after any disagreement (BOINC's reset of a host's
//    consecutive-valid count): every task of a suspect is re-checked — unless
//    it is suspect on its overlay claims alone (below).
//  - trusted when P(q < goodRate) ≥ trustConfidence and not on probation: with
//    no disagreement, about 15 weighted agreements (1 − 0.9^(a+1) ≥ 0.8).
//  - new otherwise (not yet shown good, nothing against it).
//
// Overlay claims (coordinates, cell announcements) are a second ledger with
// the same rule: a volunteer that crawls honestly but lies about where it is
// would otherwise pay for each lie with the agreements its honest crawls earn,
// and hover as a suspect for ever. Either ledger can quarantine. A coordinate
// disagreement starts an overlay probation, worked off by passing coordinate
// checks; a suspect on overlay claims alone has its crawls checked at newRate,
// not on every task (a content check cannot show a coordinate lie).
//
// Two forgetting rules keep old behaviour from shielding new behaviour: every
// outcome first discounts the evidence by `decay` (memory ≈ 1/(1 − decay)
// checks, so an honest volunteer's rare disagreements do not pile up over
// years), and a disagreement halves the agreements before it
// (`forgetOnDisagree`): trust is slow to earn and quick to lose, so an
// identity that behaves for months and then forges is quarantined after about
// four disagreements instead of dozens.
//
// Pure: records are plain JSON (persist them as they are); every function
// returns a new record and never reads a clock — `at` is passed in.
import { z } from 'zod';
import { betaCdf } from './stats.js';
import { DEFAULT_REPUTATION, type ReputationOptions } from './reputation-options.js';

export type VolunteerStatus = 'new' | 'trusted' | 'suspect' | 'quarantined' | 'banned';
export const VOLUNTEER_STATUSES: readonly VolunteerStatus[] = ['new', 'trusted', 'suspect', 'quarantined', 'banned'];

/** An operator's or the rule's hold on an identity. */
export interface Hold {
  since: number;
  reason: string;
  /** 'rule' when the reputation rule set it, else the operator's name. */
  by: string;
}

/** The persisted reputation of one identity (plain JSON; key it by `id`). */
export interface ReputationRecord {
  v: 1;
  /** The volunteer identity (peer id). */
  id: string;
  firstSeen: number;
  /** Discounted evidence from crawl checks (see the module comment). */
  agree: number;
  disagree: number;
  /** Discounted evidence from overlay checks: claims consistent / contradicted by measured RTTs. */
  overlay: { agree: number; disagree: number };
  /** Checks left on probation after the last disagreement. */
  probation: number;
  /** Overlay checks left on probation after the last coordinate disagreement (absent: 0). */
  overlayProbation?: number;
  /** Lifetime counts of outcomes, undiscounted, for the API and metrics. */
  totals: { agree: number; disagree: number; inconclusive: number; lost: number; coordinate: number; coordinateOk: number };
  lastOutcomeAt: number | null;
  /** The last task of this volunteer that a check confirmed, and when it was
   * uploaded: on quarantine, its uploads after this become unverified. */
  lastVerified: { taskId: string; at: number } | null;
  quarantine: Hold | null;
  ban: Hold | null;
  /** Operator lifts so far (a repeat offender is visible), and the last one. */
  lifts: number;
  lastLift: { at: number; by: string; what: 'quarantine' | 'ban' } | null;
  /** Tasks it finished (primary crawls, not checks), and how many when it was last put on hold. */
  tasks?: number;
  tasksAtHold?: number;
  /** Extra crawls (second and third) spent checking its tasks. */
  checked?: number;
  /** Which of its first tasks that stored page text gets its introductory
   * check (spot-check.ts's introPhase), drawn when it is first seen and never
   * shown in the API. */
  introAt?: number;
  /** Its finished tasks that stored page text (what a text forger forges). */
  textTasks?: number;
  /** Checks that compared its page text with another crawl's and agreed. */
  textAgreed?: number;
  /** Its primary tasks lost after acceptance (`totals.lost` also counts lost check crawls):
   * the loss test's count, on the same basis as `tasks`. */
  lostTasks?: number;
  /** Check crawls (second and third) it accepted: with `tasks`, the crawls it held, whose
   * lost ones are `totals.lost` (absent in records from before session 13). */
  checkCrawls?: number;
}

const holdSchema = z.object({ since: z.number().finite(), reason: z.string().max(500), by: z.string().max(200) });
const nonNeg = z.number().finite().nonnegative();
export const reputationRecordSchema = z.object({
  v: z.literal(1),
  id: z.string().min(1).max(200),
  firstSeen: z.number().finite(),
  agree: nonNeg,
  disagree: nonNeg,
  overlay: z.object({ agree: nonNeg, disagree: nonNeg }),
  probation: z.number().int().nonnegative(),
  totals: z.object({ agree: nonNeg, disagree: nonNeg, inconclusive: nonNeg, lost: nonNeg, coordinate: nonNeg, coordinateOk: nonNeg }),
  lastOutcomeAt: z.number().finite().nullable(),
  lastVerified: z.object({ taskId: z.string().max(200), at: z.number().finite() }).nullable(),
  quarantine: holdSchema.nullable(),
  ban: holdSchema.nullable(),
  lifts: z.number().int().nonnegative(),
  lastLift: z.object({ at: z.number().finite(), by: z.string().max(200), what: z.enum(['quarantine', 'ban']) }).nullable(),
  tasks: z.number().int().nonnegative().optional(),
  tasksAtHold: z.number().int().nonnegative().optional(),
  checked: z.number().int().nonnegative().optional(),
  introAt: z.number().int().positive().optional(),
  overlayProbation: z.number().int().nonnegative().optional(),
  textTasks: z.number().int().nonnegative().optional(),
  textAgreed: z.number().int().nonnegative().optional(),
  lostTasks: z.number().int().nonnegative().optional(),
  checkCrawls: z.number().int().nonnegative().optional(),
});

/** Validates a stored record (e.g. read back from LevelDB); throws with the field at fault. */
export function parseReputation(json: unknown): ReputationRecord {
  const r = reputationRecordSchema.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new RangeError(`invalid reputation record: ${issue?.path.join('.') || 'record'}: ${issue?.message ?? 'invalid'}`);
  }
  return r.data;
}

/** A fresh identity: no evidence, the prior alone. */
export function newReputation(id: string, at: number): ReputationRecord {
  return {
    v: 1,
    id,
    firstSeen: at,
    agree: 0,
    disagree: 0,
    overlay: { agree: 0, disagree: 0 },
    probation: 0,
    totals: { agree: 0, disagree: 0, inconclusive: 0, lost: 0, coordinate: 0, coordinateOk: 0 },
    lastOutcomeAt: null,
    lastVerified: null,
    quarantine: null,
    ban: null,
    lifts: 0,
    lastLift: null,
  };
}

export interface Posterior {
  /** Beta parameters of q (probability that a check disagrees). */
  alpha: number;
  beta: number;
  /** Posterior mean of q. */
  mean: number;
  /** P(q > badRate). */
  pBad: number;
  /** P(q < goodRate). */
  pGood: number;
}

/** The posterior of the crawl-check ledger (default) or of the overlay ledger. */
export function posterior(rec: ReputationRecord, opts: ReputationOptions = DEFAULT_REPUTATION, ledger: 'content' | 'overlay' = 'content'): Posterior {
  const e = ledger === 'content' ? rec : rec.overlay;
  const alpha = opts.priorDisagree + e.disagree;
  const beta = opts.priorAgree + e.agree;
  return {
    alpha,
    beta,
    mean: alpha / (alpha + beta),
    pBad: 1 - betaCdf(opts.badRate, alpha, beta),
    pGood: betaCdf(opts.goodRate, alpha, beta),
  };
}

/** What the rule says of the evidence alone (holds aside). Trust is earned by
 * crawl checks only; either ledger can make a volunteer suspect or quarantine it. */
function ruleStatus(rec: ReputationRecord, opts: ReputationOptions): VolunteerStatus {
  const p = posterior(rec, opts, 'content');
  const pBad = Math.max(p.pBad, posterior(rec, opts, 'overlay').pBad);
  if (pBad >= opts.quarantineConfidence) return 'quarantined';
  if (rec.probation > 0 || (rec.overlayProbation ?? 0) > 0 || pBad >= opts.suspectConfidence) return 'suspect';
  if (p.pGood >= opts.trustConfidence) return 'trusted';
  return 'new';
}

export function reputationStatus(rec: ReputationRecord, opts: ReputationOptions = DEFAULT_REPUTATION): VolunteerStatus {
  if (rec.ban !== null) return 'banned';
  if (rec.quarantine !== null) return 'quarantined';
  const s = ruleStatus(rec, opts);
  // The rule quarantines through recordOutcome (which sets the hold); a record
  // built by hand that crosses the line without a hold is reported as suspect.
  return s === 'quarantined' ? 'suspect' : s;
}

/** True when the volunteer may be given tasks (and chosen to verify others if not suspect). */
export function mayWork(rec: ReputationRecord): boolean {
  return rec.ban === null && rec.quarantine === null;
}

/**
 * The probability with which a completed task of this volunteer is re-checked:
 * 0 for a quarantined or banned identity (it gets no tasks), suspectRate for a
 * suspect on its crawl checks, newRate for one suspect on its overlay claims
 * alone (a content check cannot show a coordinate lie), else trustedRate + (newRate − trustedRate)·P(q > goodRate) — the
 * rate falls smoothly from about newRate for a new identity to trustedRate as
 * the posterior probability that it is not yet shown good falls (0.074 for a
 * new identity with the defaults, 0.032 when it becomes trusted, ≈ 0.020 for a volunteer
 * with a full memory of clean checks).
 */
export function spotCheckRate(rec: ReputationRecord, opts: ReputationOptions = DEFAULT_REPUTATION): number {
  const status = reputationStatus(rec, opts);
  if (status === 'banned' || status === 'quarantined') return 0;
  if (status === 'suspect') return suspectOnContent(rec, opts) ? opts.suspectRate : opts.newRate;
  const p = posterior(rec, opts);
  return opts.trustedRate + (opts.newRate - opts.trustedRate) * (1 - p.pGood);
}

/** Whether its crawl checks (probation or posterior) make it suspect, not its overlay claims alone. */
export function suspectOnContent(rec: ReputationRecord, opts: ReputationOptions = DEFAULT_REPUTATION): boolean {
  return rec.probation > 0 || posterior(rec, opts, 'content').pBad >= opts.suspectConfidence;
}

export type OutcomeKind = 'agree' | 'disagree' | 'inconclusive' | 'lost' | 'coordinate' | 'coordinate-ok';

export interface Outcome {
  kind: OutcomeKind;
  /** When the outcome was decided (manager clock). */
  at: number;
  /** Evidence weight (default 1; lost and coordinate outcomes default to their options). */
  weight?: number;
  /** The volunteer's task the outcome is about (its own crawl, as subject or verifier). */
  taskId?: string;
  /** When that task's result was uploaded: an agreement on it verifies the volunteer's uploads up to then. */
  uploadedAt?: number;
  /** Why (shown in the quarantine hold). */
  reason?: string;
  /** An agreement whose comparison matched page text on both sides (not digests
   * alone): what ends a new identity's intro (spot-check.ts's introPhase). */
  comparedText?: boolean;
}

export interface OutcomeResult {
  record: ReputationRecord;
  before: VolunteerStatus;
  after: VolunteerStatus;
  /** True when this outcome put the identity in quarantine. */
  quarantined: boolean;
}

/** Applies one outcome; returns the new record and the status change. A
 * quarantined or banned identity still records outcomes (checks of its older
 * work may still come in) but the hold stays until an operator lifts it. */
export function recordOutcome(rec: ReputationRecord, outcome: Outcome, opts: ReputationOptions = DEFAULT_REPUTATION): OutcomeResult {
  const before = reputationStatus(rec, opts);
  const r: ReputationRecord = { ...rec, overlay: { ...rec.overlay }, totals: { ...rec.totals } };
  const w = outcome.weight ?? (outcome.kind === 'lost' ? opts.lostWeight : outcome.kind.startsWith('coordinate') ? opts.coordinateWeight : 1);
  if (!(w >= 0) || !Number.isFinite(w)) throw new RangeError(`recordOutcome: weight must be a finite number >= 0, got ${w}`);
  const discount = (): void => {
    r.agree *= opts.decay;
    r.disagree *= opts.decay;
  };
  const discountOverlay = (): void => {
    r.overlay.agree *= opts.decay;
    r.overlay.disagree *= opts.decay;
  };
  switch (outcome.kind) {
    case 'agree':
      discount();
      r.agree += w;
      r.totals.agree += 1;
      if (outcome.comparedText === true) r.textAgreed = (r.textAgreed ?? 0) + 1;
      if (r.probation > 0) r.probation -= 1;
      if (outcome.taskId !== undefined && outcome.uploadedAt !== undefined && (r.lastVerified === null || outcome.uploadedAt >= r.lastVerified.at)) {
        r.lastVerified = { taskId: outcome.taskId, at: outcome.uploadedAt };
      }
      break;
    case 'disagree':
      discount();
      r.agree *= opts.forgetOnDisagree;
      r.disagree += w;
      r.probation = opts.probationChecks;
      r.totals.disagree += 1;
      break;
    case 'coordinate':
      discountOverlay();
      r.overlay.agree *= opts.forgetOnDisagree;
      r.overlay.disagree += w;
      r.overlayProbation = opts.probationChecks;
      r.totals.coordinate += 1;
      break;
    case 'coordinate-ok':
      discountOverlay();
      r.overlay.agree += w;
      if ((r.overlayProbation ?? 0) > 0) r.overlayProbation = r.overlayProbation! - 1;
      r.totals.coordinateOk += 1;
      break;
    case 'lost':
      discount();
      r.disagree += w;
      r.totals.lost += 1;
      break;
    case 'inconclusive':
      r.totals.inconclusive += 1;
      break;
  }
  r.lastOutcomeAt = outcome.at;
  let quarantined = false;
  if (r.quarantine === null && r.ban === null && ruleStatus(r, opts) === 'quarantined') {
    const content = posterior(r, opts, 'content');
    const overlay = posterior(r, opts, 'overlay');
    const [what, p] = content.pBad >= overlay.pBad ? ['checks of its crawls', content] : ['checks of its coordinate claims', overlay];
    r.quarantine = {
      since: outcome.at,
      by: 'rule',
      reason: `P(${what} fail more than ${opts.badRate} of the time) = ${p.pBad.toFixed(3)} ≥ ${opts.quarantineConfidence}` + (outcome.reason ? ` (last: ${outcome.reason})` : ''),
    };
    quarantined = true;
  }
  return { record: r, before, after: reputationStatus(r, opts), quarantined };
}

/** Evidence back to the prior alone. */
const cleared = (): Pick<ReputationRecord, 'agree' | 'disagree' | 'overlay' | 'overlayProbation'> => ({ agree: 0, disagree: 0, overlay: { agree: 0, disagree: 0 }, overlayProbation: 0 });

/** An operator lifts a quarantine: the evidence is reset to the prior and the
 * identity starts on probation, so it is re-checked on every task until it
 * shows clean work again. */
export function liftQuarantine(rec: ReputationRecord, at: number, by: string, opts: ReputationOptions = DEFAULT_REPUTATION): ReputationRecord {
  if (rec.quarantine === null) return rec;
  return { ...rec, ...cleared(), probation: opts.probationChecks, quarantine: null, lifts: rec.lifts + 1, lastLift: { at, by, what: 'quarantine' } };
}

/** An operator bans an identity: no tasks, whatever its evidence, until unbanned. */
export function ban(rec: ReputationRecord, at: number, by: string, reason: string): ReputationRecord {
  return { ...rec, ban: { since: at, by, reason } };
}

/** Lifts a ban; like a lifted quarantine, the identity restarts on probation. */
export function unban(rec: ReputationRecord, at: number, by: string, opts: ReputationOptions = DEFAULT_REPUTATION): ReputationRecord {
  if (rec.ban === null) return rec;
  const lifted: ReputationRecord = { ...rec, ban: null, lifts: rec.lifts + 1, lastLift: { at, by, what: 'ban' } };
  return lifted.quarantine !== null ? lifted : { ...lifted, ...cleared(), probation: opts.probationChecks };
}
