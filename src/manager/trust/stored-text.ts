// Free comparisons against text the manager already holds (text-refs.ts): an
// intro check passed, or a contradiction settled, with no new crawl. The live
// side: who may vouch (another peer on another network prefix, in good
// standing, whose own crawling a check has vouched for or trusted), the
// outcomes applied, the counters and the log. Anything short of a clean answer
// falls back to the crawl the rule would have issued anyway, so a forger is
// never let off: it only costs a crawl when it lies (docs/trust.md).
import type { CrawlComparison, CrawlView } from './compare.js';
import type { Check } from './check-record.js';
import type { TrustHost, TrustNetwork } from './check-host.js';
import { judgeByReferences, sideByReferences, type TextReferences } from './text-refs.js';
import { party } from './verdicts.js';
import { networkPrefix } from './verifier.js';

/** Who may vouch for another's text: not one of `parties`, nor on a party's network
 * prefix (when known), in good standing now, and trusted or vouched for by a check
 * (an agreement on its crawling, no disagreement) — a fresh key vouches for nobody. */
export function referenceEligible(s: Pick<TrustHost, 'status' | 'record'>, net: TrustNetwork | null, parties: readonly string[]): (volunteer: string) => boolean {
  const cands = net?.candidates() ?? [];
  const prefixOf = (id: string): string | null => {
    const a = cands.find((c) => c.id === id)?.address;
    return a ? networkPrefix(a) : null;
  };
  const partyPrefixes = new Set(parties.map(prefixOf).filter((p): p is string => p !== null));
  return (v) => {
    if (parties.includes(v)) return false;
    const p = prefixOf(v);
    if (p !== null && partyPrefixes.has(p)) return false;
    const st = s.status(v);
    if (st === 'trusted') return true;
    const t = s.record(v).totals;
    return st === 'new' && t.agree > 0 && t.disagree === 0;
  };
}

/** Counters of the free comparisons (API, /metrics, the benchmark). */
export interface StoredTextCounters {
  /** Intro checks passed by stored text, with no second crawl. */
  storedIntroPasses?: number;
  /** Contradictions settled by stored text of a third volunteer, with no third crawl. */
  textTieBreaks?: number;
}

/**
 * A due intro check of `subject` (its pages with text, read from the store)
 * passed by references: every page matched, body for body, by a vouched-for
 * volunteer's earlier crawl. Applies the agreement a matching second crawl
 * would have given (it ends the intro: comparedText) and returns true; false
 * (nothing applied) when any page is unreferenced or contradicted — then the
 * second crawl is issued as before.
 */
export async function introByStoredText(s: TrustHost & { counters: StoredTextCounters }, net: TrustNetwork | null, refs: TextReferences, channel: string, subject: CrawlView): Promise<boolean> {
  if (!s.spot.introByStoredText || subject.pages.length === 0) return false;
  const eligible = referenceEligible(s, net, [subject.volunteer]);
  const j = judgeByReferences(subject.pages, (p) => refs.find(channel, p.url, p.digest, eligible));
  if (j.verdict !== 'agree') {
    if (j.verdict === 'contradicted') s.core.log.info({ task: subject.taskId, volunteer: subject.volunteer, pages: j.contradicted.length }, 'intro: stored text of the same page bodies differs, a second crawl decides');
    else s.core.log.info({ task: subject.taskId, volunteer: subject.volunteer, matched: j.matched, unreferenced: j.unreferenced }, 'intro: no stored text of some page bodies, a second crawl decides');
    return false;
  }
  const p = party(subject);
  await s.apply(subject.volunteer, { kind: 'agree', at: s.core.clock(), weight: 1, taskId: p.taskId, uploadedAt: p.receivedAt, reason: 'intro passed by stored text', comparedText: true });
  s.counters.storedIntroPasses = (s.counters.storedIntroPasses ?? 0) + 1;
  s.counters.checksAgreed++;
  s.core.log.info({ task: subject.taskId, volunteer: subject.volunteer, pages: j.matched, by: j.by }, 'intro passed by stored text: no check crawl');
  return true;
}

/**
 * A disagreement made of contradictions alone (the same body digest, another
 * extraction) settled by references of those bodies from a third vouched-for
 * volunteer, when they all match the verifier's crawl and none the subject's:
 * the subject is outvoted at the comparison's weight and the verifier
 * confirmed, as a third crawl would have. Only the subject is ever convicted
 * this way — its verifier was drawn at random by the manager, the references'
 * volunteers were not (what that guarantees: docs/trust.md). Whether it was
 * settled; false (nothing applied) leaves it to a third crawl.
 */
export async function settleByStoredText(s: TrustHost & { counters: StoredTextCounters }, net: TrustNetwork | null, refs: TextReferences, ck: Check, view: CrawlView, ab: CrawlComparison): Promise<boolean> {
  if (!s.spot.textTieBreakByStored || ab.disagreements.length === 0 || ab.disagreements.some((d) => d.reason !== 'contradiction')) return false;
  const eligible = referenceEligible(s, net, [ck.subject.volunteer, view.volunteer]);
  const urls = ab.pages.filter((p) => p.kind === 'contradiction').map((p) => p.url);
  const side = sideByReferences(urls, ck.subject.pages, view.pages, (p) => refs.find(ck.channel, p.url, p.digest, eligible));
  if (side === null || side.odd !== 'a') {
    s.core.log.info({ task: ck.subject.taskId, volunteer: ck.subject.volunteer, verifier: view.volunteer, pages: urls.length, side: side?.odd ?? null }, 'contradiction: no stored text settles it, a third crawl decides');
    return false;
  }
  const at = s.core.clock();
  const a = party(ck.subject);
  const b = party(view);
  await s.apply(a.volunteer, { kind: 'disagree', at, weight: ab.weight, taskId: a.taskId, reason: `outvoted by its verifier and stored text of ${side.pages} page bodies (contradiction)` });
  if (s.spot.verifierCredit > 0) await s.apply(b.volunteer, { kind: 'agree', at, weight: s.spot.verifierCredit, taskId: b.taskId, uploadedAt: b.receivedAt, reason: 'confirmed by stored text', comparedText: true });
  s.counters.checksDisagreed++;
  s.counters.textTieBreaks = (s.counters.textTieBreaks ?? 0) + 1;
  s.core.log.info({ task: a.taskId, volunteer: a.volunteer, verifier: b.volunteer, pages: side.pages, by: side.by }, 'disagreement broken by stored text: no third crawl');
  return true;
}
