// src/recrawl/window-stats.ts: exact running sums and the strategies' per-group
// aggregates kept incrementally.
import { describe, expect, it } from 'vitest';
import {
  applyIIR,
  applyICR,
  createRecrawlState,
  historyInterval,
  icrInputs,
  iirInputs,
  reassignICR,
  reassignIIR,
  recordFailure,
  recordSubmit,
  recordSuccess,
  type ChannelRecord,
  type RecrawlState,
} from '../../src/recrawl/index.js';
import { contribute, emptyStats, exactAdd, exactValue, IcrScan, iirInputsOf, resetStats, statsOf, triggerCounts, type ExactSum } from '../../src/recrawl/window-stats.js';
import { createRng, randomInt, uniform, type Rng } from '../../src/rng.js';

const sumOf = (xs: number[]): number => {
  const s: ExactSum = [];
  for (const x of xs) exactAdd(s, x);
  return exactValue(s);
};

/** The correctly rounded sum by integer arithmetic: every value × 2^62 is an integer
 * (values in [1e-3, 1e4]), and Number(bigint) rounds to nearest, ties to even. */
const bigSum = (xs: number[]): number => Number(xs.reduce((a, x) => a + BigInt(x * 2 ** 62), 0n)) / 2 ** 62;

function shuffle<T>(rng: Rng, xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = randomInt(rng, i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

describe('exact sums', () => {
  it('keep what naive summation loses', () => {
    expect(sumOf([1e100, 1, -1e100])).toBe(1);
    expect(sumOf(new Array<number>(10).fill(0.1))).toBe(1);
    expect(new Array<number>(10).fill(0.1).reduce((a, b) => a + b)).not.toBe(1); // naive
    expect(sumOf([1, 2 ** -53, 2 ** -53])).toBe(1 + 2 ** -52); // the small terms together round up
    expect(sumOf([1, 2 ** -53])).toBe(1); // a tie rounds to even
    expect(sumOf([])).toBe(0);
  });

  it('are correctly rounded and the same in any order, with values removed again', () => {
    const rng = createRng(7);
    const xs = Array.from({ length: 3000 }, () => (rng.next() < 0.5 ? -1 : 1) * uniform(rng, 1e-3, 1e4));
    const want = bigSum(xs);
    for (let k = 0; k < 5; k++) expect(sumOf(shuffle(rng, xs))).toBe(want);
    // Add everything plus 1000 extra values in a random order, then take the extras out again.
    const extra = Array.from({ length: 1000 }, () => uniform(rng, 1e-3, 1e4));
    const ops = shuffle(rng, [...xs, ...extra]);
    const s: ExactSum = [];
    for (const x of ops) exactAdd(s, x);
    for (const x of shuffle(rng, extra)) exactAdd(s, -x);
    expect(exactValue(s)).toBe(want);
    expect(s.length).toBeLessThan(40); // partials stay few
  });
});

/** A state with `n` channels spread over 5 groups and a random window of submits, successes and failures. */
function randomState(rng: Rng, n: number): RecrawlState {
  const st = createRecrawlState(
    Array.from({ length: n }, (_, i) => ({ changeInterval: uniform(rng, 30, 2000), group: i % 5 })),
    { minInterval: 0, triggerUpdates: 2 },
    0,
    5,
  );
  let t = 0;
  for (let step = 0; step < 20 * n; step++) {
    t += uniform(rng, 0, 3);
    const c = randomInt(rng, n);
    const r = rng.next();
    if (r < 0.45) recordSubmit(st, c, t);
    else if (r < 0.85) recordSuccess(st, c, t, uniform(rng, 0.1, 20));
    else recordFailure(st, c, t);
  }
  return st;
}

const copy = (c: ChannelRecord): ChannelRecord => ({ ...c, updateTimes: [...c.updateTimes], downloadTimes: [...c.downloadTimes] });
const plain = (s: ReturnType<typeof statsOf>) => s.map(({ hSum, ...g }) => ({ ...g, hSum: exactValue(hSum) }));

describe('per-group window aggregates', () => {
  it('kept incrementally (subtract the old contribution, add the new) equal the aggregates from scratch', () => {
    const rng = createRng(11);
    const st = randomState(rng, 200);
    const trig = st.options.triggerUpdates;
    const inc = statsOf(st.channels, 5, trig);
    let t = 1e4;
    for (let step = 0; step < 5000; step++) {
      t += uniform(rng, 0, 3);
      const i = randomInt(rng, st.channels.length);
      const before = copy(st.channels[i]!);
      const r = rng.next();
      if (r < 0.35) recordSubmit(st, i, t);
      else if (r < 0.75) recordSuccess(st, i, t, uniform(rng, 0.1, 20));
      else if (r < 0.9) recordFailure(st, i, t);
      else {
        // a move to another group starts the window afresh there
        const c = st.channels[i]!;
        c.group = randomInt(rng, 5);
        c.subCount = c.sucCount = c.failCount = c.gapSum = 0;
      }
      contribute(inc, before, -1, trig);
      contribute(inc, st.channels[i]!, 1, trig);
    }
    expect(plain(inc)).toEqual(plain(statsOf(shuffle(rng, st.channels), 5, trig)));
    // The trigger's counts are the ones src/recrawl keeps (group 0's size and channels past the trigger).
    const over = st.channels.filter((c) => c.group === 0 && c.sucCount > trig).length;
    expect(triggerCounts(inc)).toEqual({ topCount: st.channels.filter((c) => c.group === 0).length, triggerCount: over });
    resetStats(inc);
    expect(inc.every((g) => g.sub === 0 && g.updated === 0 && exactValue(g.hSum) === 0 && g.members > 0)).toBe(true);
  });

  it('give IIR the same round as the naive sums, up to their rounding', () => {
    const rng = createRng(3);
    const a = randomState(rng, 500);
    const b = structuredClone(a);
    const naive = iirInputs(a);
    const exact = iirInputsOf(statsOf(b.channels, 5, b.options.triggerUpdates));
    expect(exact.cnt).toEqual(naive.cnt);
    expect(exact.sub).toEqual(naive.sub);
    expect(exact.suc).toEqual(naive.suc);
    exact.sumIv.forEach((v, g) => expect(v).toBeCloseTo(naive.sumIv[g]!, 6));
    // the exact figure is the correctly rounded sum of the hIntervals
    const his = (g: number) => b.channels.filter((c) => c.group === g).flatMap((c) => (historyInterval(c) === null ? [] : [historyInterval(c)!]));
    for (let g = 0; g < 5; g++) expect(exact.sumIv[g]).toBe(sumOf(shuffle(rng, his(g))));
    const ra = reassignIIR(a, 1e5);
    const rb = applyIIR(b, exact, 1e5);
    rb.intervals.forEach((v, g) => expect(v).toBeCloseTo(ra.intervals[g]!, 9));
    expect(rb.successRates).toEqual(ra.successRates);
    expect(b.rounds).toBe(1);
    expect(b.channels.every((c) => c.subCount === 0 && c.gapSum === 0)).toBe(true);
  });

  it("give ICR the same round as the naive sums, in any order of the pass", () => {
    const rng = createRng(5);
    const a = randomState(rng, 500);
    const b = structuredClone(a);
    const now = 2e4;
    const stats = statsOf(b.channels, 5, b.options.triggerUpdates);
    const scan = (order: ChannelRecord[]) => {
      const s = new IcrScan(b, now);
      for (const c of order) s.add(c);
      return s.inputs(stats);
    };
    const x = scan(b.channels);
    expect(scan(shuffle(rng, b.channels))).toEqual(x);
    const naive = icrInputs(a, now);
    expect(x.tKnown).toEqual(naive.tKnown);
    expect(x.members).toEqual(naive.members);
    expect([x.sub, x.suc, x.allN]).toEqual([naive.sub, naive.suc, naive.allN]);
    expect([x.subBy, x.sucBy]).toEqual([naive.subBy, naive.sucBy]);
    expect(x.subBy.some((n, g) => n > 0 && x.sucBy[g]! < n)).toBe(true); // rates below 1 to compare
    expect(x.observedLoad).toBeCloseTo(naive.observedLoad, 9);
    for (const icrEncourage of ['system', 'group'] as const) {
      const ra = reassignICR({ ...structuredClone(a), options: { ...a.options, strategy: 'icr', icrEncourage } }, now);
      const rb = applyICR({ ...structuredClone(b), options: { ...b.options, strategy: 'icr', icrEncourage } }, x, now);
      expect(rb.theta!).toBeCloseTo(ra.theta!, 9);
      expect(rb.successRates).toEqual(ra.successRates);
      expect(rb.encouraged).toEqual(ra.encouraged);
    }
  });

  it('start empty and refuse a group that does not exist', () => {
    const s = emptyStats(2);
    expect(s).toHaveLength(2);
    const c: ChannelRecord = { group: 3, changeInterval: 1, subCount: 0, sucCount: 0, failCount: 0, gapSum: 0, lastUpdate: null, updateTimes: [], downloadTimes: [] };
    expect(() => contribute(s, c, 1, 5)).toThrow(RangeError);
  });
});
