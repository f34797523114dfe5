// What the API, /metrics and the dashboard show of an identity: its
// reputation record summarised (status, rate, posterior). Apart from
// reputation.ts, which holds the rule itself.
import { DEFAULT_REPUTATION, type ReputationOptions } from './reputation-options.js';
import { posterior, reputationStatus, spotCheckRate, type Hold, type ReputationRecord, type VolunteerStatus } from './reputation.js';

/** What the API, /metrics and the dashboard show of an identity. */
export interface ReputationSummary {
  id: string;
  status: VolunteerStatus;
  spotCheckRate: number;
  /** Posterior mean of the disagreement rate and P(rate > badRate), P(rate < goodRate) (crawl checks). */
  meanDisagreeRate: number;
  pBad: number;
  pGood: number;
  /** P(coordinate checks fail more than badRate of the time). */
  overlayPBad: number;
  agree: number;
  disagree: number;
  overlay: ReputationRecord['overlay'];
  totals: ReputationRecord['totals'];
  probation: number;
  lastVerified: ReputationRecord['lastVerified'];
  quarantine: Hold | null;
  ban: Hold | null;
  tasks: number;
  tasksAtHold: number | null;
  checked: number;
  /** Its tasks that stored page text (what a text forger forges and its intro check compares). */
  textTasks: number;
}

export function summarise(rec: ReputationRecord, opts: ReputationOptions = DEFAULT_REPUTATION): ReputationSummary {
  const p = posterior(rec, opts);
  return {
    id: rec.id,
    status: reputationStatus(rec, opts),
    spotCheckRate: spotCheckRate(rec, opts),
    meanDisagreeRate: p.mean,
    pBad: p.pBad,
    pGood: p.pGood,
    overlayPBad: posterior(rec, opts, 'overlay').pBad,
    agree: rec.agree,
    disagree: rec.disagree,
    overlay: rec.overlay,
    totals: rec.totals,
    probation: rec.probation,
    lastVerified: rec.lastVerified,
    quarantine: rec.quarantine,
    ban: rec.ban,
    tasks: rec.tasks ?? 0,
    tasksAtHold: rec.tasksAtHold ?? null,
    checked: rec.checked ?? 0,
    textTasks: rec.textTasks ?? 0,
  };
}
