import { describe, expect, it } from 'vitest';
import { createRng, type Rng } from '../../src/rng.js';
import type { CrawlComparison, Verdict } from '../../src/manager/trust/compare.js';
import { newReputation, recordOutcome, spotCheckRate } from '../../src/manager/trust/reputation.js';
import { checkRate, drawIntroAt, introLate, introPassesOver, introPhase, owesIntro } from '../../src/manager/trust/intro.js';
import {
  checkScope,
  checkWindow,
  decideSpotCheck,
  expectedHonestOverhead,
  spotCheckOptions,
  verificationOverhead,
  type CompletedTask,
} from '../../src/manager/trust/spot-check.js';
import { coverageMajority, resolveByStoredCrawl, resolvePair, resolveTieBreak } from '../../src/manager/trust/tie-break.js';
import { chooseVerifier, networkPrefix, regionCoord, type VolunteerInfo } from '../../src/manager/trust/verifier.js';

const fixed = (v: number): Rng => ({ next: () => v });
const MIN = 60_000;
const task = (o: Partial<CompletedTask> = {}): CompletedTask => ({
  taskId: 't1',
  volunteer: 'v',
  status: 'completed',
  issuedAt: 0,
  receivedAt: MIN,
  livePages: 20,
  knownPages: 20,
  revisited: 20,
  changedOfRevisited: 1,
  sinceLastCrawlMinutes: 60,
  ratePerMinute: 1 / (24 * 60),
  ...o,
});

describe('decideSpotCheck', () => {
  it('draws a normal task at the volunteer\'s rate, after the upload', () => {
    expect(decideSpotCheck(task(), 0.1, fixed(0.05))).toEqual({ check: true, reason: 'sampled', probability: 0.1 });
    expect(decideSpotCheck(task(), 0.1, fixed(0.15)).check).toBe(false);
    expect(decideSpotCheck(task(), spotCheckRate(newReputation('n', 0)), fixed(0.07)).check).toBe(true); // 0.074 for a new identity
  });
  it('always checks a completed crawl with no page on a channel that has pages (dropped while acknowledged)', () => {
    expect(decideSpotCheck(task({ livePages: 0, revisited: 0, changedOfRevisited: 0 }), 0.02, fixed(0.99))).toEqual({ check: true, reason: 'anomaly-empty', probability: 1 });
    expect(decideSpotCheck(task({ livePages: 0, knownPages: 0, revisited: 0, changedOfRevisited: 0 }), 0.02, fixed(0.99)).check).toBe(false);
  });
  it('always checks more changed pages than the change rate makes believable (a forger must fake new digests)', () => {
    // 15 of 20 changed in an hour on a daily channel: P(Bin(20, 1 − e^{−2/24}) ≥ 15) is tiny.
    const d = decideSpotCheck(task({ changedOfRevisited: 15 }), 0.02, fixed(0.99));
    expect(d.reason).toBe('anomaly-changes');
    expect(d.check).toBe(true);
    expect(d.anomalyP).toBeLessThan(1e-10);
    expect(decideSpotCheck(task({ changedOfRevisited: 2 }), 0.02, fixed(0.99)).check).toBe(false);
  });
  it('with per-page history, pages that change on every visit are no anomaly', () => {
    const revisits = Array.from({ length: 20 }, (_, i) => ({ pChange: i < 15 ? 1 : 0.01, changed: i < 15 }));
    expect(decideSpotCheck(task({ changedOfRevisited: 15, revisits }), 0.02, fixed(0.99)).check).toBe(false);
    const forged = revisits.map((r, i) => ({ ...r, changed: r.changed || i < 18 }));
    expect(decideSpotCheck(task({ changedOfRevisited: 18, revisits: forged }), 0.02, fixed(0.99)).reason).toBe('anomaly-changes');
  });
  it('draws a failed task too (its retry can be the check); never a cancelled one', () => {
    expect(decideSpotCheck(task({ status: 'failed' }), 0.1, fixed(0.05))).toEqual({ check: true, reason: 'failure-claim', probability: 0.1 });
    expect(decideSpotCheck(task({ status: 'cancelled' }), 1, fixed(0)).check).toBe(false);
  });
  it('rejects a rate outside [0, 1] and unknown options', () => {
    expect(() => decideSpotCheck(task(), 1.5, fixed(0))).toThrow(RangeError);
    expect(() => spotCheckOptions({ bogus: 1 } as never)).toThrow(/bogus/);
  });
});

describe('checkWindow', () => {
  it('ends the check while a page is still unchanged with probability 0.9: Δt = −ln 0.9 / (2r)', () => {
    // r = 1/60 per minute, safety 2: Δt = 0.10536 / (1/30) = 3.16 min from the first crawl's start.
    const w = checkWindow({ issuedAt: 0, receivedAt: MIN, ratePerMinute: 1 / 60 }, MIN, MIN);
    expect(w.notBefore).toBe(MIN);
    expect(w.deadline).toBeCloseTo(-Math.log(0.9) * 30 * MIN, 6);
    expect(w.pUnchanged).toBeCloseTo(0.9, 12);
    expect(w.feasible).toBe(true);
    expect(checkWindow({ issuedAt: 0, receivedAt: MIN, ratePerMinute: 1 / 60 }, MIN, 2.5 * MIN).feasible).toBe(false);
  });
  it('bounds a static channel\'s check by maxDelayMs and honours minDelayMs', () => {
    const w = checkWindow({ issuedAt: 0, receivedAt: MIN, ratePerMinute: 0 }, MIN, MIN, { minDelayMs: 5 * MIN, maxDelayMs: 60 * MIN });
    expect(w.notBefore).toBe(6 * MIN);
    expect(w.deadline).toBe(61 * MIN);
    expect(w.pUnchanged).toBe(1);
  });
});

describe('checkScope', () => {
  const urls = (p: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${p}${i}`);
  it('re-crawls a small channel whole', () => {
    expect(checkScope({ uploaded: urls('u', 10), otherLive: urls('o', 100), knownNotReported: [] }, createRng(1))).toEqual({ kind: 'full' });
  });
  it('samples a large one: half from the uploaded pages, the rest from the others', () => {
    const s = checkScope({ uploaded: urls('u', 100), otherLive: urls('o', 300), knownNotReported: urls('k', 10) }, createRng(1));
    expect(s.kind).toBe('sample');
    if (s.kind !== 'sample') return;
    expect(s.urls).toHaveLength(50);
    expect(new Set(s.urls).size).toBe(50);
    expect(s.urls.filter((u) => u.startsWith('u'))).toHaveLength(25);
    expect([...s.urls].sort()).toEqual(s.urls);
  });
});

describe('networkPrefix', () => {
  it('gives the /24 of IPv4 (also IPv4-mapped) and the /48 of IPv6', () => {
    expect(networkPrefix('192.0.2.17')).toBe('192.0.2.0/24');
    expect(networkPrefix('::ffff:192.0.2.17')).toBe('192.0.2.0/24');
    expect(networkPrefix('0:0:0:0:0:ffff:c000:0211')).toBe('192.0.2.0/24');
    expect(networkPrefix('::FFFF:192.0.2.17')).toBe('192.0.2.0/24');
    expect(networkPrefix('2001:db8:abcd:12::1')).toBe('2001:db8:abcd::/48');
    expect(networkPrefix('2001:DB8::1')).toBe('2001:db8:0::/48');
    expect(networkPrefix('[2001:db8:1::5]')).toBe('2001:db8:1::/48');
    expect(networkPrefix('fe80::1%eth0')).toBe('fe80:0:0::/48');
    expect(networkPrefix('64:ff9b::192.0.2.1')).toBe('64:ff9b:0::/48');
    expect(networkPrefix('::')).toBe('0:0:0::/48');
    expect(networkPrefix('example.org')).toBeNull();
    expect(networkPrefix('300.1.1.1')).toBeNull();
  });
});

describe('chooseVerifier', () => {
  const subject: VolunteerInfo = { id: 'S', status: 'new', address: '10.0.0.1', coord: [0, 0] };
  const v = (id: string, status: VolunteerInfo['status'], address: string | null, coord: number[] | null = null): VolunteerInfo => ({ id, status, address, coord });
  it('judges region only from a coordinate claim witnesses vouched for and none contradicted', () => {
    const far = [300, 0];
    const rec = (agree: number, disagree: number) => ({ overlay: { agree, disagree } });
    expect(regionCoord(rec(0, 0), far)).toBeNull();
    expect(regionCoord(rec(2, 0.5), far)).toBeNull();
    expect(regionCoord(rec(1.5, 0), far)).toBe(far);
    expect(regionCoord(rec(3, 0), null)).toBeNull();
    // A liar claiming to sit 300 ms from everyone, its claim unchecked, is no
    // longer everyone's "independent" verifier: among equals it is drawn at random.
    const liar = v('L', 'new', '10.0.5.1', regionCoord(rec(0, 0), far) as number[] | null);
    const honest = ['H1', 'H2', 'H3'].map((id, i) => v(id, 'new', `10.0.${6 + i}.1`, [1 + i, 0]));
    let liarDrawn = 0;
    for (let seed = 1; seed <= 400; seed++) if (chooseVerifier(subject, [liar, ...honest], createRng(seed))!.id === 'L') liarDrawn++;
    expect(liarDrawn).toBeGreaterThan(60);
    expect(liarDrawn).toBeLessThan(140);
    // With its far claim taken at face value it would win every draw.
    for (let seed = 1; seed <= 20; seed++) expect(chooseVerifier(subject, [{ ...liar, coord: far }, ...honest], createRng(seed))!.id).toBe('L');
  });
  it('never the subject, a suspect, a quarantined or banned volunteer', () => {
    const c = [subject, v('q', 'quarantined', '10.9.0.1'), v('s', 'suspect', '10.9.0.2'), v('b', 'banned', '10.9.0.3')];
    expect(chooseVerifier(subject, c, createRng(1))).toBeNull();
  });
  it('prefers another prefix over trust, trust over region', () => {
    const samePrefixTrusted = v('A', 'trusted', '10.0.0.7', [100, 0]);
    const otherPrefixNew = v('B', 'new', '10.0.1.5', [1, 0]);
    expect(chooseVerifier(subject, [samePrefixTrusted, otherPrefixNew], createRng(1))).toEqual({ id: 'B', otherPrefix: true, otherRegion: false, trusted: false });
    const otherPrefixTrusted = v('C', 'trusted', '10.0.2.5', [1, 0]);
    expect(chooseVerifier(subject, [samePrefixTrusted, otherPrefixNew, otherPrefixTrusted], createRng(1))!.id).toBe('C');
    const farTrusted = v('D', 'trusted', '10.0.3.5', [50, 0]);
    expect(chooseVerifier(subject, [samePrefixTrusted, otherPrefixNew, otherPrefixTrusted, farTrusted], createRng(1))!.id).toBe('D');
  });
  it('falls back to the same prefix when nobody else can, and says so', () => {
    expect(chooseVerifier(subject, [v('A', 'new', '10.0.0.9')], createRng(1))).toEqual({ id: 'A', otherPrefix: false, otherRegion: null, trusted: false });
    expect(chooseVerifier(subject, [v('A', 'new', null)], createRng(1))!.otherPrefix).toBeNull();
  });
  it('a tie-breaker avoids the first verifier and its prefix too', () => {
    const first = v('B', 'trusted', '10.0.1.5');
    const c = [first, v('B2', 'trusted', '10.0.1.6'), v('E', 'new', '10.0.4.1')];
    expect(chooseVerifier(subject, c, createRng(1), [first])!.id).toBe('E');
  });
  it('never one whose last check crawl was lost until it finishes something; among equals one holding no check', () => {
    const dropper = { ...v('D', 'trusted', '10.5.0.1'), lostLastCheck: true };
    expect(chooseVerifier(subject, [dropper], createRng(1))).toBeNull();
    expect(chooseVerifier(subject, [dropper, v('E', 'new', '10.0.0.9')], createRng(1))!.id).toBe('E');
    const busy = { ...v('A', 'trusted', '10.1.0.1'), checksHeld: 1 };
    const idle = { ...v('B', 'trusted', '10.2.0.1'), checksHeld: 0 };
    for (let seed = 1; seed <= 20; seed++) expect(chooseVerifier(subject, [busy, idle], createRng(seed))!.id).toBe('B');
    // Idle ranks below every other preference: another prefix first.
    expect(chooseVerifier(subject, [busy, { ...v('C', 'trusted', '10.0.0.8'), checksHeld: 0 }], createRng(1))!.id).toBe('A');
  });
  it('a third crawl goes to one a check vouched for, then one that delivered work, before region; trust and prefix first', () => {
    const first = v('B', 'new', '10.9.0.1');
    const silent = v('D', 'new', '10.1.0.1', [100, 0]);
    const delivered = { ...v('E', 'new', '10.2.0.1', [1, 0]), delivered: true };
    const vouched = { ...v('F', 'new', '10.3.0.1', [1, 0]), delivered: true, vouched: true };
    for (let seed = 1; seed <= 20; seed++) {
      // Never-delivering `silent` is far away (another region): it still loses to one that delivered.
      expect(chooseVerifier(subject, [silent, delivered], createRng(seed), [first])!.id).toBe('E');
      expect(chooseVerifier(subject, [silent, delivered, vouched], createRng(seed), [first])!.id).toBe('F');
      expect(chooseVerifier(subject, [vouched, v('T', 'trusted', '10.4.0.1')], createRng(seed), [first])!.id).toBe('T');
      expect(chooseVerifier(subject, [{ ...vouched, address: '10.0.0.9' }, silent], createRng(seed), [first])!.id).toBe('D');
    }
    // A second crawl keeps the plain draw by default (region, then at random): a misbehaving
    // volunteer drawn to verify is caught by the third crawl that follows.
    const seen = new Set<string>();
    for (let seed = 1; seed <= 30; seed++) seen.add(chooseVerifier(subject, [{ ...silent, coord: [1, 0] }, delivered, vouched], createRng(seed))!.id);
    expect(seen).toEqual(new Set(['D', 'E', 'F']));
  });
  it('with secondCrawlPrefersDelivered a second crawl goes to one that delivered before one in another region, never by vouching; the plain draw when nobody has', () => {
    const on = { secondCrawlPrefersDelivered: true };
    const dropper = v('D', 'new', '10.1.0.1', [100, 0]);
    const delivered = { ...v('E', 'new', '10.2.0.1', [1, 0]), delivered: true };
    const vouched = { ...v('F', 'new', '10.3.0.1', [1, 0]), delivered: true, vouched: true };
    for (let seed = 1; seed <= 30; seed++) expect(chooseVerifier(subject, [dropper, delivered], createRng(seed), [], on)!.id).toBe('E');
    const drawn = new Set<string>();
    for (let seed = 1; seed <= 30; seed++) drawn.add(chooseVerifier(subject, [{ ...dropper, coord: [1, 0] }, delivered, vouched], createRng(seed), [], on)!.id);
    expect(drawn).toEqual(new Set(['E', 'F']));
    // Prefix and trust still rank above it.
    expect(chooseVerifier(subject, [{ ...delivered, address: '10.0.0.9' }, dropper], createRng(1), [], on)!.id).toBe('D');
    expect(chooseVerifier(subject, [delivered, v('T', 'trusted', '10.4.0.1')], createRng(1), [], on)!.id).toBe('T');
    // Nobody has delivered yet: every one can be drawn.
    const seen = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) seen.add(chooseVerifier(subject, [v('A', 'new', '10.5.0.1'), v('B', 'new', '10.6.0.1'), v('C', 'new', '10.7.0.1')], createRng(seed), [], on)!.id);
    expect(seen).toEqual(new Set(['A', 'B', 'C']));
  });
  it('a second crawl goes to a newcomer that still owes its intro while they are at least half the eligible, drawn among them; never for a third crawl', () => {
    const owing = (id: string) => ({ ...v(id, 'new', `10.${id.charCodeAt(0)}.0.1`), owesIntro: true });
    const over = (id: string) => ({ ...v(id, 'new', `10.${id.charCodeAt(0)}.0.1`), owesIntro: false });
    // A network's start: half or more owe theirs: only they are drawn, every one of them.
    const start = [owing('A'), owing('B'), over('C'), over('D')];
    const drawn = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) drawn.add(chooseVerifier(subject, start, createRng(seed))!.id);
    expect(drawn).toEqual(new Set(['A', 'B']));
    // Two colluders joining settled volunteers (the other owing one is the subject itself):
    // 1 owing of 9 eligible is under half, so the plain draw — the partner is drawn no more often than anyone.
    const settled = [owing('P'), ...'CDEFGHIJ'.split('').map(over)];
    let partner = 0;
    for (let seed = 1; seed <= 900; seed++) if (chooseVerifier(subject, settled, createRng(seed))!.id === 'P') partner++;
    expect(partner / 900).toBeGreaterThan(1 / 9 - 0.04);
    expect(partner / 900).toBeLessThan(1 / 9 + 0.04);
    // Off with introPairMinShare 0; and region (independence) ranks above it.
    const off = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) off.add(chooseVerifier(subject, start, createRng(seed), [], { introPairMinShare: 0 })!.id);
    expect(off).toEqual(new Set(['A', 'B', 'C', 'D']));
    const farOver = { ...over('E'), coord: [100, 0] };
    for (let seed = 1; seed <= 20; seed++) expect(chooseVerifier(subject, [{ ...owing('A'), coord: [1, 0] }, farOver], createRng(seed))!.id).toBe('E');
    // A third crawl must judge: the owing newcomer gets no preference there.
    const judged = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) judged.add(chooseVerifier(subject, start, createRng(seed), [v('X', 'new', '10.200.0.1')])!.id);
    expect(judged).toEqual(new Set(['A', 'B', 'C', 'D']));
  });
  it('picks at random among equals', () => {
    const c = [v('A', 'trusted', '10.1.0.1'), v('B', 'trusted', '10.2.0.1'), v('C', 'trusted', '10.3.0.1')];
    const seen = new Set<string>();
    for (let seed = 1; seed <= 30; seed++) seen.add(chooseVerifier(subject, c, createRng(seed))!.id);
    expect(seen).toEqual(new Set(['A', 'B', 'C']));
  });
});

function cmp(verdict: Verdict, weight = verdict === 'agree' ? 1 : verdict === 'disagree' ? 1 : 0, reason: 'mismatch' | 'contradiction' = 'mismatch'): CrawlComparison {
  return {
    verdict,
    weight,
    disagreements: verdict === 'disagree' ? [{ reason, side: null, detail: '' }] : [],
    counts: {} as CrawlComparison['counts'],
    trials: 0,
    mismatches: 0,
    expectedMismatches: 0,
    pValue: 1,
    pages: [],
  };
}
const parties = {
  a: { volunteer: 'A', taskId: 'ta', receivedAt: 100 },
  b: { volunteer: 'B', taskId: 'tb', receivedAt: 200 },
  c: { volunteer: 'C', taskId: 'tc', receivedAt: 300 },
};

describe('resolvePair', () => {
  it('an agreement verifies the subject\'s upload and credits the verifier', () => {
    const r = resolvePair(cmp('agree'), parties.a, parties.b, 250);
    expect(r.needsTieBreak).toBe(false);
    expect(r.outcomes).toEqual([
      { volunteer: 'A', outcome: expect.objectContaining({ kind: 'agree', weight: 1, taskId: 'ta', uploadedAt: 100 }) },
      { volunteer: 'B', outcome: expect.objectContaining({ kind: 'agree', weight: 1, taskId: 'tb' }) },
    ]);
    expect(resolvePair(cmp('agree'), parties.a, parties.b, 250, { verifierCredit: 0 }).outcomes).toHaveLength(1);
  });
  it('an agreement says whether it matched page text (what ends an intro) or digests alone', () => {
    const withText = { ...cmp('agree'), counts: { ...cmp('agree').counts, identical: 2, 'same-digest': 5 } };
    const digestsOnly = { ...cmp('agree'), counts: { ...cmp('agree').counts, identical: 0, 'same-text': 0, volatile: 0, 'same-digest': 7 } };
    for (const o of resolvePair(withText, parties.a, parties.b, 250).outcomes) expect(o.outcome.comparedText, o.volunteer).toBe(true);
    for (const o of resolvePair(digestsOnly, parties.a, parties.b, 250).outcomes) expect(o.outcome.comparedText, o.volunteer).toBeUndefined();
    // A third crawl's confirmation carries the agreeing pair's comparison.
    const tb = resolveTieBreak(cmp('disagree'), cmp('disagree'), withText, parties, 400);
    expect(tb.outcomes.filter((o) => o.outcome.kind === 'agree').map((o) => o.outcome.comparedText)).toEqual([true, true]);
  });
  it('an inconclusive comparison is recorded as such; a disagreement asks for a third crawl and accuses nobody yet', () => {
    expect(resolvePair(cmp('inconclusive'), parties.a, parties.b, 250).outcomes.map((o) => o.outcome.kind)).toEqual(['inconclusive', 'inconclusive']);
    expect(resolvePair(cmp('disagree'), parties.a, parties.b, 250)).toEqual({ outcomes: [], needsTieBreak: true });
  });
});

describe('resolveTieBreak', () => {
  const kinds = (r: ReturnType<typeof resolveTieBreak>): Record<string, string> => Object.fromEntries(r.outcomes.map((o) => [o.volunteer, o.outcome.kind]));
  it('the subject outvoted by two agreeing crawls takes the disagreement, at the weaker weight', () => {
    const r = resolveTieBreak(cmp('disagree', 2, 'contradiction'), cmp('disagree', 1), cmp('agree'), parties, 400);
    expect(r.odd).toBe('a');
    expect(kinds(r)).toEqual({ A: 'disagree', B: 'agree', C: 'agree' });
    expect(r.outcomes[0]!.outcome.weight).toBe(1);
    expect(r.outcomes[0]!.outcome.reason).toMatch(/mismatch/);
  });
  it('a lying verifier is outvoted instead, and the subject\'s upload is verified', () => {
    const r = resolveTieBreak(cmp('disagree'), cmp('agree'), cmp('disagree'), parties, 400);
    expect(r.odd).toBe('b');
    expect(kinds(r)).toEqual({ B: 'disagree', A: 'agree', C: 'agree' });
    expect(r.outcomes.find((o) => o.volunteer === 'A')!.outcome.uploadedAt).toBe(100);
  });
  it('three different crawls accuse nobody (a page that differs for everyone)', () => {
    const r = resolveTieBreak(cmp('disagree'), cmp('disagree'), cmp('disagree'), parties, 400);
    expect(r.odd).toBeNull();
    expect(kinds(r)).toEqual({ A: 'inconclusive', B: 'inconclusive', C: 'inconclusive' });
  });
  it('a third crawl that agrees with both accuses nobody and credits all', () => {
    const r = resolveTieBreak(cmp('disagree'), cmp('agree'), cmp('agree'), parties, 400);
    expect(r.odd).toBeNull();
    expect(kinds(r)).toEqual({ A: 'agree', B: 'agree', C: 'agree' });
  });
  it('an inconclusive side comparison accuses nobody', () => {
    const r = resolveTieBreak(cmp('disagree'), cmp('inconclusive'), cmp('agree'), parties, 400);
    expect(r.odd).toBeNull();
    expect(kinds(r)).toEqual({ A: 'inconclusive', B: 'agree', C: 'agree' });
  });
});

describe('coverage judged on its own', () => {
  // An empty crawl ("completed", no page) against two crawls that found the pages:
  // not-crawled against it in both its comparisons.
  const notCrawled = (side: 'a' | 'b'): CrawlComparison => ({ ...cmp('disagree', 0.5), disagreements: [{ reason: 'not-crawled', side, detail: '' }] });
  const kinds = (r: { outcomes: { volunteer: string; outcome: { kind: string } }[] }): Record<string, string> => Object.fromEntries(r.outcomes.map((o) => [o.volunteer, o.outcome.kind]));
  it('two crawls that found the pages outvote the one that found none, though they disagree on text (the forger among them stays undecided)', () => {
    // a empty; b honest; c a forger: b and c contradict each other.
    const r = resolveTieBreak(notCrawled('a'), notCrawled('a'), cmp('disagree', 2, 'contradiction'), parties, 400);
    expect(r.odd).toBe('a');
    expect(r.onCoverage).toBe(true);
    expect(kinds(r)).toEqual({ A: 'disagree', B: 'inconclusive', C: 'inconclusive' });
    expect(r.outcomes[0]!.outcome.weight).toBe(0.5);
    expect(r.outcomes[0]!.outcome.reason).toMatch(/outvoted on coverage .*not-crawled/);
    // The empty crawl as the verifier (b) or the third crawl (c): the same.
    expect(resolveTieBreak(notCrawled('b'), cmp('disagree', 2, 'contradiction'), notCrawled('a'), parties, 400).odd).toBe('b');
    expect(resolveTieBreak(cmp('disagree', 2, 'contradiction'), notCrawled('b'), notCrawled('b'), parties, 400).odd).toBe('c');
  });
  it('accuses nobody when the two others dispute coverage too, or when the missing side differs', () => {
    expect(coverageMajority({ ab: notCrawled('a'), ac: notCrawled('a'), bc: notCrawled('b') }, parties, 400)).toBeNull();
    expect(coverageMajority({ ab: notCrawled('a'), ac: notCrawled('b'), bc: cmp('disagree') }, parties, 400)).toBeNull();
    expect(resolveTieBreak(notCrawled('a'), notCrawled('b'), cmp('disagree'), parties, 400).odd).toBeNull();
    // Content disputes alone never reach the coverage rule.
    expect(resolveTieBreak(cmp('disagree'), cmp('disagree'), cmp('disagree'), parties, 400).odd).toBeNull();
  });
  it('a stored crawl of a third volunteer settles a coverage dispute against the subject, crediting nobody', () => {
    const r = resolveByStoredCrawl(notCrawled('a'), notCrawled('a'), cmp('agree'), parties, 400)!;
    expect(r.odd).toBe('a');
    expect(kinds(r)).toEqual({ A: 'disagree', B: 'inconclusive' });
    expect(r.outcomes[0]!.outcome.reason).toMatch(/stored crawl of C/);
    // The verifier's text may differ from the stored crawl's (it is older): still settled.
    expect(resolveByStoredCrawl(notCrawled('a'), notCrawled('a'), cmp('disagree', 2, 'contradiction'), parties, 400)!.odd).toBe('a');
    // Not when the stored crawl saw nothing the subject missed, when the verifier missed
    // the stored crawl's pages (it may have made its own up), when the dispute is about
    // content, or when the verifier is the one that missed the pages.
    expect(resolveByStoredCrawl(notCrawled('a'), cmp('agree'), cmp('agree'), parties, 400)).toBeNull();
    expect(resolveByStoredCrawl(notCrawled('a'), notCrawled('a'), notCrawled('a'), parties, 400)).toBeNull();
    expect(resolveByStoredCrawl(cmp('disagree', 2, 'contradiction'), notCrawled('a'), cmp('agree'), parties, 400)).toBeNull();
    expect(resolveByStoredCrawl({ ...notCrawled('a'), disagreements: [...notCrawled('a').disagreements, { reason: 'mismatch', side: null, detail: '' }] }, notCrawled('a'), cmp('agree'), parties, 400)).toBeNull();
    expect(resolveByStoredCrawl(notCrawled('b'), notCrawled('a'), cmp('agree'), parties, 400)).toBeNull();
  });
});

describe('overhead', () => {
  it('is (second crawls + third crawls) ÷ primary tasks', () => {
    expect(verificationOverhead({ primary: 1000, spotChecks: 50, tieBreaks: 5, recrawls: 40 })).toBeCloseTo(0.055, 12);
    expect(verificationOverhead({ primary: 0, spotChecks: 0, tieBreaks: 0, recrawls: 0 })).toBe(0);
  });
  it('for an honest volunteer starts at a new identity\'s rate and falls as it earns trust', () => {
    // With the intro check (one in the first 4 tasks with text: with text on 40 % of its tasks, one
    // in the first 10) and without it (the sampled 7.4 % from the first task).
    expect(expectedHonestOverhead(500, undefined, { introTasks: 0 }).overhead[0]).toBeCloseTo(0.074, 12);
    expect(expectedHonestOverhead(500).overhead[0]).toBeCloseTo(0.25, 12); // text on every task
    const { overhead, trustedAfter } = expectedHonestOverhead(500, undefined, {}, 0.4);
    expect(overhead[0]).toBeCloseTo(0.1, 12);
    expect(overhead[9]).toBeCloseTo(0.1, 12);
    expect(Math.max(...overhead)).toBeLessThanOrEqual(0.1 + 1e-12);
    expect(overhead[99]!).toBeLessThan(overhead[9]!);
    expect(overhead[499]!).toBeLessThan(0.05);
    expect(trustedAfter).not.toBeNull();
    expect(trustedAfter!).toBeLessThan(200);
  });
});

describe('a new identity\'s intro check', () => {
  const rec = (o: { tasks: number; textTasks?: number; introAt?: number; checked?: number }) => ({ ...newReputation('v', 0), ...o });
  const agreeOn = (text: boolean) => ({ kind: 'agree' as const, at: 1, ...(text ? { comparedText: true } : {}) });
  it('counts tasks with text: to come before its drawn one, due from it until a check matched its text, disagreed, or three extra crawls were spent', () => {
    // Counted in tasks that stored text (session 9: a forger went 17 tasks unchecked, its drawn task among text-less ones).
    expect(introPhase(rec({ tasks: 2, textTasks: 2, introAt: 3 }))).toBe('before'); // (from 3 tasks on it is late: below)
    expect(introPhase(rec({ tasks: 12, textTasks: 2, introAt: 3 }), { introLateTasks: 0 })).toBe('before');
    expect(introPhase(rec({ tasks: 3, textTasks: 3, introAt: 3 }))).toBe('due');
    expect(introPhase(rec({ tasks: 9, textTasks: 4, introAt: 3, checked: 2 }))).toBe('due'); // two checks with no verdict: try again
    expect(introPhase(rec({ tasks: 9, textTasks: 4, introAt: 3, checked: 3 }))).toBe('over');
    // An agreement on digests alone (an unchanged crawl) leaves the intro owed; one that matched text ends it.
    const digestsOnly = recordOutcome(rec({ tasks: 5, textTasks: 3, introAt: 3, checked: 1 }), agreeOn(false)).record;
    expect(introPhase(digestsOnly)).toBe('due');
    expect(introPhase(recordOutcome(digestsOnly, agreeOn(true)).record)).toBe('over');
    // So does a verification it crawled that matched another's text (its crawl's text was compared).
    expect(introPhase(recordOutcome(rec({ tasks: 1, textTasks: 0, introAt: 3 }), { ...agreeOn(true), weight: 1 }).record)).toBe('over');
    expect(introPhase(recordOutcome(rec({ tasks: 5, textTasks: 3, introAt: 3, checked: 1 }), { kind: 'disagree', at: 1 }).record)).toBe('over');
    // A volunteer that stores no text at all is checked on any crawl after introTextlessTasks.
    expect(introPhase(rec({ tasks: 19, textTasks: 0, introAt: 1 }))).toBe('before');
    expect(introPhase(rec({ tasks: 20, textTasks: 0, introAt: 1 }))).toBe('due');
    expect(introPhase(rec({ tasks: 5 }))).toBe('over'); // no intro drawn (introTasks 0, or an old record until its next task)
    expect(introPhase(rec({ tasks: 1, introAt: 4 }), { introTasks: 0 })).toBe('over');
  });
  it('is late once a newcomer that stored text has finished introLateTasks tasks before its drawn crawl with text: due at once', () => {
    expect(introLate(rec({ tasks: 2, textTasks: 2, introAt: 3 }))).toBe(false);
    expect(introPhase(rec({ tasks: 2, textTasks: 2, introAt: 3 }))).toBe('before');
    expect(introLate(rec({ tasks: 3, textTasks: 1, introAt: 3 }))).toBe(true);
    expect(introPhase(rec({ tasks: 3, textTasks: 1, introAt: 3 }))).toBe('due');
    expect(checkRate(rec({ tasks: 3, textTasks: 1, introAt: 3 }))).toBe(1);
    // Not with no text at all (introTextlessTasks covers that), nor once its drawn crawl came, nor when off.
    expect(introLate(rec({ tasks: 12, textTasks: 0, introAt: 3 }))).toBe(false);
    expect(introLate(rec({ tasks: 12, textTasks: 3, introAt: 3 }))).toBe(false);
    expect(introPhase(rec({ tasks: 12, textTasks: 2, introAt: 3 }), { introLateTasks: 0 })).toBe('before');
    expect(introPhase(recordOutcome(rec({ tasks: 12, textTasks: 2, introAt: 3 }), agreeOn(true)).record)).toBe('over');
  });
  it('is owed, and payable as a verifier, by a new identity that stored text and whose intro is not over; not by one with no text, a suspect, or one whose text matched', () => {
    expect(owesIntro(rec({ tasks: 2, textTasks: 1, introAt: 3 }))).toBe(true);
    expect(owesIntro(rec({ tasks: 3, textTasks: 3, introAt: 3 }))).toBe(true);
    // `empty` and `drop` never stored text: their verifications would need third crawls or vanish.
    expect(owesIntro(rec({ tasks: 6, textTasks: 0, introAt: 1 }))).toBe(false);
    expect(owesIntro(rec({ tasks: 3, textTasks: 3, introAt: 3 }), undefined, { introTasks: 0 })).toBe(false);
    expect(owesIntro(recordOutcome(rec({ tasks: 2, textTasks: 1, introAt: 3 }), agreeOn(true)).record)).toBe(false);
    // An agreement on digests alone leaves it owed; a disagreement makes it a suspect (never a verifier).
    expect(owesIntro(recordOutcome(rec({ tasks: 2, textTasks: 1, introAt: 3 }), agreeOn(false)).record)).toBe(true);
    expect(owesIntro(recordOutcome(rec({ tasks: 2, textTasks: 1, introAt: 3 }), { kind: 'disagree', at: 1 }).record)).toBe(false);
  });
  it('sets the rate: nothing sampled before it, every task when due, nothing more in the first introTasks tasks with text, the reputation\'s after, and a suspect\'s whatever the intro', () => {
    expect(checkRate(rec({ tasks: 2, textTasks: 2, introAt: 3 }))).toBe(0);
    expect(checkRate(rec({ tasks: 8, textTasks: 3, introAt: 3 }))).toBe(1);
    // The intro check is the sampled rate's share of the first introTasks (4) tasks with text.
    const agreed = recordOutcome(rec({ tasks: 8, textTasks: 3, introAt: 3, checked: 1 }), agreeOn(true)).record;
    expect(checkRate(agreed)).toBe(0);
    expect(checkRate({ ...agreed, tasks: 20, textTasks: 4 })).toBe(0);
    const after = { ...agreed, tasks: 21, textTasks: 5 };
    expect(checkRate(after)).toBe(spotCheckRate(after));
    expect(checkRate(after)).toBeGreaterThan(0.05);
    const suspect = recordOutcome(rec({ tasks: 1, introAt: 3 }), { kind: 'disagree', at: 1 }).record;
    expect(checkRate(suspect)).toBe(1);
  });
  it('passes over a crawl that stored no page text while the volunteer stores text at all (the intro stays owed); one that never does is checked after introTextlessTasks', () => {
    expect(introPassesOver(rec({ tasks: 4, textTasks: 3, introAt: 3 }), 0)).toBe(true);
    expect(introPassesOver(rec({ tasks: 4, textTasks: 3, introAt: 3 }), 2)).toBe(false);
    expect(introPassesOver(rec({ tasks: 60, textTasks: 3, introAt: 3 }), 0)).toBe(true); // owed until a crawl with text
    expect(introPassesOver(rec({ tasks: 19, textTasks: 0, introAt: 3 }), 0)).toBe(true);
    expect(introPassesOver(rec({ tasks: 20, textTasks: 0, introAt: 3 }), 0)).toBe(false); // never uploads text: checked all the same
    expect(introPassesOver(rec({ tasks: 4 }), 0)).toBe(false);
  });
  // The service's loop (service.ts's taskFinished): count the task, draw at checkRate, a due intro passes over a
  // crawl with no text; a check of a crawl with text ends the intro, one of a text-less crawl does not.
  const model = (o: { textShare: number; seed: number; tasks: number; introTasks?: number; perTask?: boolean }) => {
    const rng = createRng(o.seed);
    const opts = o.introTasks === undefined ? {} : { introTasks: o.introTasks };
    const firstOnText: (number | null)[] = [];
    let checks = 0;
    for (let v = 0; v < 2000; v++) {
      let r: ReturnType<typeof newReputation> = { ...newReputation(`t${v}`, 0), introAt: drawIntroAt(rng, opts) };
      let first: number | null = null;
      for (let t = 1; t <= o.tasks; t++) {
        const text = rng.next() < o.textShare ? 3 : 0;
        r = { ...r, tasks: t, textTasks: (r.textTasks ?? 0) + (text > 0 ? 1 : 0) };
        const due = introPhase(r, opts) === 'due';
        if (!(rng.next() < checkRate(r, undefined, opts)) || (due && introPassesOver(r, text, opts))) continue;
        checks++;
        r = recordOutcome({ ...r, checked: (r.checked ?? 0) + 1 }, agreeOn(text > 0)).record;
        if (first === null && text > 0) first = t;
      }
      firstOnText.push(first);
    }
    return { firstOnText, checks };
  };
  it('lands on a crawl with text for every forger, within its first 4 tasks with text, for about one check in its first 20 tasks', () => {
    // Text on a third of its tasks: a text forger's first check is on text for all of them, and early.
    const { firstOnText, checks } = model({ textShare: 1 / 3, seed: 3, tasks: 20 });
    const got = firstOnText.filter((t): t is number => t !== null);
    expect(got.length).toBeGreaterThan(0.97 * 2000); // P(fewer than 4 text tasks in 20, and the draw above them) is small
    expect(checks / 2000).toBeLessThan(1.6); // the intro, then a few tasks at ≤ 7.4 %
    // With text on every task the intro falls within the first 4 for sure.
    const always = model({ textShare: 1, seed: 4, tasks: 20 });
    expect(always.firstOnText.every((t) => t !== null && t <= 4)).toBe(true);
  });
  it('a forger whose text came early and whose drawn task would fall among text-less crawls is still checked on text (session 9\'s escape)', () => {
    // 6 tasks with text, then text-less recrawls: counted in all tasks (a draw of 7..10) the intro never met its text.
    const rng = createRng(9);
    for (let i = 0; i < 200; i++) {
      const introAt = drawIntroAt(rng);
      let r: ReturnType<typeof newReputation> = { ...newReputation('f', 0), introAt };
      let checkedOnText = false;
      for (let t = 1; t <= 17 && !checkedOnText; t++) {
        const text = t <= 6 ? 2 : 0;
        r = { ...r, tasks: t, textTasks: (r.textTasks ?? 0) + (text > 0 ? 1 : 0) };
        if (checkRate(r) === 1 && !introPassesOver(r, text)) checkedOnText = text > 0;
      }
      expect(checkedOnText, `introAt ${introAt}`).toBe(true);
    }
  });
  it('is drawn uniformly from the first introTasks tasks with text', () => {
    const rng = createRng(5);
    const counts = new Array<number>(11).fill(0);
    for (let i = 0; i < 10_000; i++) counts[drawIntroAt(rng)!]!++;
    expect(counts[0]).toBe(0);
    for (let t = 1; t <= 4; t++) expect(counts[t]!).toBeGreaterThan(2300);
    for (let t = 5; t <= 10; t++) expect(counts[t]).toBe(0);
    for (let i = 0; i < 1000; i++) expect(drawIntroAt(rng, { introTasks: 10 })).toBeLessThanOrEqual(10);
    expect(drawIntroAt(rng, { introTasks: 0 })).toBeUndefined();
  });
  it('checks every forger with text on each task within its first 4 tasks (sampling alone: about a quarter of them)', () => {
    const firstCheck = (introTasks: number, seed: number): number[] => {
      const rng = createRng(seed);
      const out: number[] = [];
      for (let v = 0; v < 2000; v++) {
        let r: ReturnType<typeof newReputation> = { ...newReputation(`v${v}`, 0), introAt: drawIntroAt(rng, { introTasks }) };
        for (let t = 1; t <= 200; t++) {
          r = { ...r, tasks: t, textTasks: t };
          if (rng.next() < checkRate(r, undefined, { introTasks })) {
            out.push(t);
            break;
          }
        }
      }
      return out;
    };
    const withIntro = firstCheck(4, 1);
    expect(withIntro.length).toBe(2000);
    expect(Math.max(...withIntro)).toBeLessThanOrEqual(4);
    const sampled = firstCheck(0, 1);
    const within4 = sampled.filter((t) => t <= 4).length / 2000;
    expect(within4).toBeGreaterThan(0.2);
    expect(within4).toBeLessThan(0.36); // 1 − 0.926^4 = 0.27
  });
});
