import { describe, expect, it } from 'vitest';
import {
  ban,
  liftQuarantine,
  mayWork,
  newReputation,
  parseReputation,
  posterior,
  recordOutcome,
  reputationStatus,
  spotCheckRate,
  suspectOnContent,
  unban,
  type Outcome,
  type ReputationRecord,
} from '../../src/manager/trust/reputation.js';
import { reputationOptions } from '../../src/manager/trust/reputation-options.js';
import { summarise } from '../../src/manager/trust/reputation-summary.js';

const apply = (rec: ReputationRecord, kinds: Outcome['kind'][], at = 1000): ReputationRecord => {
  let r = rec;
  for (const kind of kinds) r = recordOutcome(r, { kind, at }).record;
  return r;
};
const times = <T>(n: number, x: T): T[] => new Array<T>(n).fill(x);

describe('reputation options', () => {
  it('validates and names the bad option', () => {
    expect(() => reputationOptions({ goodRate: 0.3 })).toThrow(/goodRate/);
    expect(() => reputationOptions({ decay: 0 })).toThrow(/decay/);
    expect(() => reputationOptions({ trustedRate: 0.5 })).toThrow(/trustedRate/);
    expect(() => reputationOptions({ nope: 1 } as never)).toThrow(/unknown option 'nope'/);
  });
});

describe('a new identity', () => {
  it('is new, not yet trusted, and checked at 0.02 + 0.06 × P(q > 0.1) = 0.074', () => {
    const r = newReputation('peerA', 0);
    expect(reputationStatus(r)).toBe('new');
    const p = posterior(r);
    expect(p.alpha).toBe(1);
    expect(p.beta).toBe(1);
    expect(p.pBad).toBeCloseTo(0.75, 12); // uniform prior: P(q > 0.25)
    expect(p.pGood).toBeCloseTo(0.1, 12);
    expect(spotCheckRate(r)).toBeCloseTo(0.074, 12);
  });
  it('is suspect after one disagreement (Beta(2,1): P(q > 0.25) = 0.9375) and quarantined by the second', () => {
    const first = recordOutcome(newReputation('peerA', 0), { kind: 'disagree', at: 10, reason: 'mismatch' });
    expect(first.after).toBe('suspect');
    expect(first.quarantined).toBe(false);
    expect(posterior(first.record).pBad).toBeCloseTo(0.9375, 12);
    expect(spotCheckRate(first.record)).toBe(1);
    const second = recordOutcome(first.record, { kind: 'disagree', at: 20, reason: 'contradiction' });
    // Evidence decays by 0.98 per outcome: d = 0.98 + 1, Beta(2.98, 1): P(q > 0.25) = 1 − 0.25^2.98.
    expect(posterior(second.record).pBad).toBeCloseTo(1 - 0.25 ** 2.98, 12);
    expect(second.quarantined).toBe(true);
    expect(second.after).toBe('quarantined');
    expect(second.record.quarantine).toMatchObject({ since: 20, by: 'rule' });
    expect(second.record.quarantine!.reason).toMatch(/contradiction/);
    expect(spotCheckRate(second.record)).toBe(0);
    expect(mayWork(second.record)).toBe(false);
  });
  it('becomes trusted after 17 clean checks: 1 − 0.9^(a+1) ≥ 0.8 needs a ≥ 14.28, and a_n = (1 − 0.98^n)/0.02', () => {
    const r16 = apply(newReputation('peerB', 0), times(16, 'agree'));
    const r17 = recordOutcome(r16, { kind: 'agree', at: 1 }).record;
    expect(r16.agree).toBeCloseTo((1 - 0.98 ** 16) / 0.02, 9);
    expect(reputationStatus(r16)).toBe('new');
    expect(reputationStatus(r17)).toBe('trusted');
    expect(spotCheckRate(r17)).toBeLessThan(spotCheckRate(r16));
    expect(spotCheckRate(r17)).toBeCloseTo(0.02 + 0.06 * (1 - posterior(r17).pGood), 12);
  });
  it('an identity that restarts under a new key starts untrusted again and is checked more', () => {
    const old = apply(newReputation('old-key', 0), times(60, 'agree'));
    const fresh = newReputation('new-key', 5000);
    expect(reputationStatus(old)).toBe('trusted');
    expect(reputationStatus(fresh)).toBe('new');
    expect(spotCheckRate(fresh)).toBeGreaterThan(3 * spotCheckRate(old));
  });
});

describe('forgetting', () => {
  it('a trusted identity that turns bad is quarantined by its fourth disagreement, not its third', () => {
    // a_40 = (1 − 0.98^40)/0.02 = 27.7; each disagreement: a ← 0.98·a/2, d ← 0.98·d + 1.
    let r = apply(newReputation('turncoat', 0), times(40, 'agree'));
    expect(reputationStatus(r)).toBe('trusted');
    const statuses: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = recordOutcome(r, { kind: 'disagree', at: 100 + i });
      r = res.record;
      statuses.push(res.after);
    }
    expect(statuses).toEqual(['suspect', 'suspect', 'suspect', 'quarantined']);
    expect(r.agree).toBeCloseTo(((1 - 0.98 ** 40) / 0.02) * (0.98 * 0.5) ** 4, 9);
  });
  it('one disagreement puts a trusted volunteer on probation for three checks, then it earns trust back', () => {
    let r = apply(newReputation('honest', 0), times(80, 'agree'));
    r = recordOutcome(r, { kind: 'disagree', at: 1 }).record;
    expect(reputationStatus(r)).toBe('suspect');
    expect(r.probation).toBe(3);
    r = apply(r, times(2, 'agree'));
    expect(reputationStatus(r)).toBe('suspect');
    r = apply(r, ['agree']);
    expect(r.probation).toBe(0);
    // The disagreement halved its agreements (40.1 → 19.6): not trusted at once, but soon.
    expect(reputationStatus(r)).toBe('new');
    let more = 0;
    while (reputationStatus(r) !== 'trusted') {
      r = apply(r, ['agree']);
      more++;
    }
    expect(more).toBeGreaterThan(0);
    expect(more).toBeLessThanOrEqual(10);
  });
  it('a lost task is weak evidence: weight 0.25 and no probation', () => {
    const r = recordOutcome(newReputation('churn', 0), { kind: 'lost', at: 1 }).record;
    expect(r.disagree).toBe(0.25);
    expect(r.probation).toBe(0);
    expect(r.totals.lost).toBe(1);
    // Beta(1.25, 1): P(q > 0.25) = 1 − 0.25^1.25 = 0.823 < 0.9: not suspect for one lost task...
    expect(reputationStatus(r)).toBe('new');
    // ... but three in a row (d = 0.25·(1 + 0.98 + 0.98²) = 0.735: 1 − 0.25^1.735 = 0.910) are.
    expect(reputationStatus(apply(r, ['lost', 'lost']))).toBe('suspect');
  });
  it('coordinate claims have their own ledger: honest crawling does not pay for a lie about where one is', () => {
    // Forty clean crawl checks, then a claim contradicted by measured RTTs, twice.
    let r = apply(newReputation('liar', 0), times(40, 'agree'));
    const first = recordOutcome(r, { kind: 'coordinate', at: 1, reason: 'too-close' });
    r = first.record;
    expect(r.overlay.disagree).toBe(1);
    expect(r.agree).toBeCloseTo((1 - 0.98 ** 40) / 0.02, 9); // crawl ledger untouched
    expect(r.totals.coordinate).toBe(1);
    expect(first.after).toBe('suspect'); // an overlay probation: it verifies nobody
    // ... but its crawls, which agree, are checked at the new-identity rate, not on every task.
    expect(suspectOnContent(r)).toBe(false);
    expect(spotCheckRate(r)).toBe(0.08);
    expect(posterior(r, undefined, 'overlay').pBad).toBeCloseTo(0.9375, 12);
    const second = recordOutcome(r, { kind: 'coordinate', at: 2, reason: 'too-close' });
    expect(second.quarantined).toBe(true);
    expect(second.record.quarantine!.reason).toMatch(/coordinate claims/);
  });
  it('a volunteer suspect on its coordinate claims alone has its crawls checked at the new rate; a content disagreement or probation brings every task back', () => {
    const liar = recordOutcome(newReputation('liar', 0), { kind: 'coordinate', at: 1 }).record;
    expect(reputationStatus(liar)).toBe('suspect');
    expect(liar.probation).toBe(0);
    expect(liar.overlayProbation).toBe(3);
    expect(spotCheckRate(liar)).toBe(0.08);
    // Content agreements do not work off an overlay probation; passing coordinate checks do.
    const agreed = apply(liar, times(3, 'agree'));
    expect(agreed.overlayProbation).toBe(3);
    expect(reputationStatus(agreed)).toBe('suspect');
    expect(reputationStatus(apply(agreed, times(3, 'coordinate-ok')))).toBe('new');
    // A content disagreement: every task checked again.
    const forged = recordOutcome(liar, { kind: 'disagree', at: 2 }).record;
    expect(suspectOnContent(forged)).toBe(true);
    expect(spotCheckRate(forged)).toBe(1);
    // A record from before (probation set by a coordinate outcome) keeps the suspect's rate until it works it off.
    expect(spotCheckRate({ ...newReputation('old', 0), overlay: { agree: 0, disagree: 1 }, probation: 3 })).toBe(1);
  });
  it('consistent coordinate checks build the overlay ledger, not trust', () => {
    const r = apply(newReputation('n', 0), times(30, 'coordinate-ok'));
    expect(r.overlay.agree).toBeCloseTo((1 - 0.98 ** 30) / 0.02, 9);
    expect(r.totals.coordinateOk).toBe(30);
    expect(reputationStatus(r)).toBe('new');
    expect(reputationStatus(recordOutcome(apply(r, times(3, 'agree')), { kind: 'coordinate', at: 1 }).record)).toBe('suspect');
  });
  it('an inconclusive check changes nothing but the count', () => {
    const before = apply(newReputation('x', 0), times(5, 'agree'));
    const after = recordOutcome(before, { kind: 'inconclusive', at: 1 }).record;
    expect(after.agree).toBe(before.agree);
    expect(after.totals.inconclusive).toBe(1);
  });
});

describe('verified uploads', () => {
  it('an agreement marks the checked upload as the last verified one, never moving back', () => {
    let r = recordOutcome(newReputation('v', 0), { kind: 'agree', at: 50, taskId: 't2', uploadedAt: 40 }).record;
    expect(r.lastVerified).toEqual({ taskId: 't2', at: 40 });
    r = recordOutcome(r, { kind: 'agree', at: 60, taskId: 't1', uploadedAt: 30 }).record;
    expect(r.lastVerified).toEqual({ taskId: 't2', at: 40 });
  });
});

describe('operator actions', () => {
  const quarantined = apply(newReputation('q', 0), ['disagree', 'disagree']);
  it('lifting a quarantine resets the evidence and starts a probation', () => {
    const r = liftQuarantine(quarantined, 500, 'alice');
    expect(r.quarantine).toBeNull();
    expect(r.agree).toBe(0);
    expect(r.disagree).toBe(0);
    expect(r.overlay).toEqual({ agree: 0, disagree: 0 });
    expect(r.lifts).toBe(1);
    expect(r.lastLift).toEqual({ at: 500, by: 'alice', what: 'quarantine' });
    expect(reputationStatus(r)).toBe('suspect');
    expect(mayWork(r)).toBe(true);
    expect(r.totals.disagree).toBe(2); // history kept
  });
  it('a ban overrides everything until it is lifted', () => {
    const trusted = apply(newReputation('b', 0), times(40, 'agree'));
    const banned = ban(trusted, 10, 'alice', 'spam seen by hand');
    expect(reputationStatus(banned)).toBe('banned');
    expect(spotCheckRate(banned)).toBe(0);
    expect(mayWork(banned)).toBe(false);
    expect(recordOutcome(banned, { kind: 'agree', at: 11 }).after).toBe('banned');
    const back = unban(banned, 20, 'bob');
    expect(reputationStatus(back)).toBe('suspect');
    expect(back.lastLift).toEqual({ at: 20, by: 'bob', what: 'ban' });
  });
  it('a banned and quarantined identity stays quarantined when unbanned', () => {
    const both = ban(quarantined, 1, 'alice', 'x');
    expect(reputationStatus(unban(both, 2, 'alice'))).toBe('quarantined');
  });
});

describe('persistence', () => {
  it('round-trips through JSON and validates what it reads back', () => {
    const r = recordOutcome(apply(newReputation('peerZ', 123), ['agree', 'disagree', 'lost']), { kind: 'agree', at: 9, taskId: 't9', uploadedAt: 8 }).record;
    const back = parseReputation(JSON.parse(JSON.stringify(r)));
    expect(back).toEqual(r);
    expect(summarise(back)).toEqual(summarise(r));
    expect(() => parseReputation({ ...r, agree: -1 })).toThrow(/agree/);
    expect(() => parseReputation({ ...r, v: 2 })).toThrow(/v/);
  });
});
