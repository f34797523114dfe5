// What the spot checks (checks.ts) need of the rest of the manager: the network
// side that finds and reaches volunteers, and the trust service that holds
// reputations and counters. Apart so that the checks' helpers (verdicts.ts,
// verifier-pool.ts) can name them without importing the checks themselves.
import type { ServiceCore } from '../services/core.js';
import type { DispatchResult, IssuedTask } from '../services/tasks.js';
import type { CompareOptions } from './compare.js';
import type { Outcome, ReputationRecord, VolunteerStatus } from './reputation.js';
import type { ReputationOptions } from './reputation-options.js';
import type { SpotCheckOptions } from './spot-check.js';
import type { VolunteerInfo } from './verifier.js';

/** What the network side lends the trust service. */
export interface TrustNetwork {
  /** Volunteers that could crawl now, with the address they connect from and their coordinate. */
  candidates(): Omit<VolunteerInfo, 'status'>[];
  /** Signs the task and sends it to this volunteer (no routing). With `forward: false`
   * the volunteer runs it or refuses it ('full'), never hands it on. */
  dispatchTo(t: IssuedTask, peer: string, opts?: { forward?: boolean }): Promise<DispatchResult>;
}

/** What the checks need of the trust service (service.ts implements it). */
export interface TrustHost {
  readonly core: ServiceCore;
  readonly counters: {
    spotChecks: number;
    tieBreaks: number;
    checksAgreed: number;
    checksDisagreed: number;
    checksInconclusive: number;
    checksDropped: number;
    checksCancelled?: number;
    noMajority?: number;
    coverageOutvotes?: number;
    storedTieBreaks?: number;
    witnessTieBreaks?: number;
    storedIntroPasses?: number;
    textTieBreaks?: number;
    byReason: Record<string, number>;
  };
  readonly spot: SpotCheckOptions;
  readonly rep: ReputationOptions;
  readonly cmp: CompareOptions;
  status(id: string): VolunteerStatus;
  /** Its reputation (a fresh one for an identity never seen). */
  record(id: string): ReputationRecord;
  excluded(): Set<string>;
  apply(volunteer: string, outcome: Outcome): Promise<void>;
  saveCounters(): Promise<void>;
  recrawl(channel: string, why: string): Promise<void>;
  noteRecrawl(id: string): void;
  countRecrawl(): void;
  /** One more extra crawl spent on `volunteer`'s work, held by `crawler`. */
  noteChecked(volunteer: string, crawler: string): Promise<void>;
}
