// A check crawl as the manager keeps it: in memory while in flight (with the
// parts received so far), in the store without them (so a restart resumes it),
// and a check waiting for a volunteer with room. checks.ts sends and decides them.
import type { Channel } from '../domain/channel.js';
import type { CrawlComparison, CrawlView } from './compare.js';
import type { CheckCrawl } from './views.js';
import type { ServiceCore } from '../services/core.js';

export interface Check {
  id: string;
  stage: 'verify' | 'tiebreak';
  channel: string;
  ratePerMinute: number | null;
  subject: CrawlView;
  /** The first verifier's crawl and its comparison with the subject's (tie-breaks). */
  first?: CrawlView;
  ab?: CrawlComparison;
  peer: string;
  issuedAt: number;
  deadline: number;
  crawl: CheckCrawl;
  /** Loaded from the store after a restart. */
  resumed?: boolean;
}

/** What is stored of a check (all of it but the parts received so far). */
export type StoredCheck = Omit<Check, 'crawl' | 'resumed'>;

const isView = (v: unknown): v is CrawlView => {
  const x = v as Partial<CrawlView> | null;
  return typeof x === 'object' && x !== null && typeof x.volunteer === 'string' && typeof x.taskId === 'string' && Array.isArray(x.pages) && Array.isArray(x.validators);
};

/** A stored check, or null when the record is not one (a damaged record is dropped, not trusted). */
export function parseStoredCheck(v: unknown): StoredCheck | null {
  const x = v as Partial<StoredCheck> | null;
  if (typeof x !== 'object' || x === null) return null;
  const ok =
    typeof x.id === 'string' && (x.stage === 'verify' || x.stage === 'tiebreak') && typeof x.channel === 'string' && (x.ratePerMinute === null || typeof x.ratePerMinute === 'number') &&
    isView(x.subject) && typeof x.peer === 'string' && Number.isFinite(x.issuedAt) && Number.isFinite(x.deadline) &&
    (x.stage === 'verify' || (isView(x.first) && typeof x.ab === 'object' && x.ab !== null));
  return ok ? (x as StoredCheck) : null;
}

/** A check no independent volunteer could take yet: offered again at each sweep until `until`. */
export type Waiting =
  | { stage: 'verify'; ch: Channel; subject: CrawlView; reason: string; ratePerMinute: number | null; until: number }
  | { stage: 'tiebreak'; ck: Check; view: CrawlView; ab: NonNullable<Check['ab']>; until: number };

/** The checks stored in flight when the manager stopped; damaged records are deleted (logged), not trusted. */
export async function loadStoredChecks(core: Pick<ServiceCore, 'repos' | 'log' | 'commit'>): Promise<StoredCheck[]> {
  const { repos, log } = core;
  const good: StoredCheck[] = [];
  const bad: string[] = [];
  for (const { id, value } of await repos.volunteers.checks()) {
    const ck = parseStoredCheck(value);
    if (ck === null || ck.id !== id) bad.push(id);
    else good.push(ck);
  }
  if (bad.length > 0) {
    log.warn({ checks: bad.length }, 'damaged check records dropped');
    await core.commit.run(() => repos.commit(bad.map((id) => repos.volunteers.checkDelOp(id))));
  }
  return good;
}
