// How a spot check's disagreement is judged once the third opinion is in: a
// crawl the manager already stores (a coverage dispute) or a third crawl. Pure
// judgement plus the reputation outcomes it applies; sending crawls and
// distrusting pages stay with TrustChecks (checks.ts).
import type { CheckParty } from './tie-break.js';
import { coverageDisputeOfSubject, resolveByStoredCrawl, resolveTieBreak } from './tie-break.js';
import { compareCrawls, type CrawlComparison, type CrawlView } from './compare.js';
import { storedThirdCrawl } from './views.js';
import type { Check } from './check-record.js';
import type { TrustHost } from './check-host.js';
import type { CoverageWitnesses } from './witnesses.js';

export const party = (v: CrawlView): CheckParty => ({ volunteer: v.volunteer, taskId: v.taskId, receivedAt: v.receivedAt });

/**
 * A coverage dispute against the subject (it missed the pages its verifier
 * found) settled by a crawl the manager already holds: the stored crawl of
 * the channel by a third volunteer in good standing whose pages were seen
 * within storedCrawlMaxAgeMs before the subject's task was issued
 * (tie-break.ts's resolveByStoredCrawl). Saves a third crawl; in the
 * benchmark the `empty` volunteer's anomaly checks each needed one. When the
 * store holds no such crawl, what an earlier check crawl of the channel by a
 * third volunteer in good standing found (`witnesses`, witnesses.ts) stands
 * in for it: pages only, judged on coverage alone, like a stored crawl.
 */
export async function settleFromStore(s: TrustHost, ck: Check, view: CrawlView, ab: CrawlComparison, witnesses?: CoverageWitnesses): Promise<boolean> {
  const maxAge = s.spot.storedCrawlMaxAgeMs;
  if (maxAge <= 0 || !coverageDisputeOfSubject(ab)) return false;
  const good = (id: string): boolean => {
    const st = s.status(id);
    return st === 'new' || st === 'trusted';
  };
  const third = { since: ck.subject.issuedAt - maxAge, exclude: [ck.subject.volunteer, view.volunteer], eligible: good };
  const fromStore = await storedThirdCrawl(s.core.repos, ck.channel, third);
  const stored = fromStore ?? witnesses?.find(ck.channel, third) ?? null;
  if (stored === null) {
    s.core.log.info({ task: ck.subject.taskId, channel: ck.channel }, 'coverage dispute: no stored crawl or check crawl of a third volunteer in good standing recent enough, a third crawl decides');
    return false;
  }
  const change = { ratePerMinute: ck.ratePerMinute };
  const ac = compareCrawls(ck.subject, stored, change, s.cmp);
  const bc = compareCrawls(view, stored, change, s.cmp);
  const tb = resolveByStoredCrawl(ab, ac, bc, { a: party(ck.subject), b: party(view), c: party(stored) }, s.core.clock(), s.cmp.weights);
  if (tb === null) {
    s.core.log.info({ task: ck.subject.taskId, stored: stored.taskId, ac: ac.verdict, bc: bc.disagreements.map((d) => d.reason) }, 'coverage dispute: the stored crawl does not settle it, a third crawl decides');
    return false;
  }
  for (const o of tb.outcomes) await s.apply(o.volunteer, o.outcome);
  const c = s.counters;
  c.checksDisagreed++;
  c.storedTieBreaks = (c.storedTieBreaks ?? 0) + 1;
  if (fromStore === null) c.witnessTieBreaks = (c.witnessTieBreaks ?? 0) + 1;
  s.core.log.info({ task: ck.subject.taskId, volunteer: ck.subject.volunteer, verifier: view.volunteer, stored: stored.taskId, storedBy: stored.volunteer, witness: fromStore === null, note: tb.note }, 'disagreement broken by a stored crawl: no third crawl');
  return true;
}

/** A third crawl came back: the majority of the three decides (tie-break.ts).
 * Whether the subject was outvoted (the caller distrusts its pages then). */
export async function judgeThird(s: TrustHost, ck: Check, c: CrawlView): Promise<boolean> {
  const now = s.core.clock();
  const a = ck.subject;
  const b = ck.first!;
  const change = { ratePerMinute: ck.ratePerMinute };
  const ac = compareCrawls(a, c, change, s.cmp);
  const bc = compareCrawls(b, c, change, s.cmp);
  const tb = resolveTieBreak(ck.ab!, ac, bc, { a: party(a), b: party(b), c: party(c) }, now, s.spot, s.cmp.weights);
  for (const o of tb.outcomes) await s.apply(o.volunteer, o.outcome);
  const counters = s.counters;
  if (tb.odd === null) {
    counters.checksInconclusive++;
    counters.noMajority = (counters.noMajority ?? 0) + 1;
  } else counters.checksDisagreed++;
  if (tb.onCoverage === true) counters.coverageOutvotes = (counters.coverageOutvotes ?? 0) + 1;
  s.core.log.info({ task: a.taskId, volunteer: a.volunteer, verifier: b.volunteer, third: c.volunteer, odd: tb.odd, note: tb.note, bc: bc.disagreements.map((d) => `${d.reason}: ${d.detail}`) }, 'disagreement broken');
  return tb.odd === 'a';
}
