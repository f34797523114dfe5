import { describe, expect, it } from 'vitest';
import { allocateFrequencies, meanFreshness, periodicFreshness } from '../../src/recrawl/freshness-allocation.js';
import {
  channelInterval,
  createRecrawlState,
  observeLoad,
  reassign,
  recordFailure,
  recordSubmit,
  recordSuccess,
  recrawlOptions,
  restoreState,
  serialiseState,
  shouldReassign,
  type RecrawlState,
  waitIntervals,
} from '../../src/recrawl/index.js';

/** ∂F/∂f of a channel with change interval θ at frequency f, written out. */
function marginal(theta: number, f: number): number {
  const r = 1 / theta / f;
  return (1 - Math.exp(-r) * (1 + r)) * theta;
}

describe('freshness allocation (Cho & Garcia-Molina)', () => {
  it('periodic freshness: recrawled once per change interval, a copy is fresh 1 − 1/e of the time', () => {
    expect(periodicFreshness(1 / 60, 1 / 60)).toBeCloseTo(1 - Math.exp(-1), 12);
    // Twice per change interval: r = 1/2 → (1 − e^(−1/2)) / (1/2).
    expect(periodicFreshness(1 / 60, 1 / 30)).toBeCloseTo(2 * (1 - Math.exp(-0.5)), 12);
    expect(periodicFreshness(1 / 60, 0)).toBe(0);
  });

  it('one group spends the whole budget: 10 channels at cost 2 with budget 1 → f = 1/20', () => {
    const f = allocateFrequencies([{ channels: 10, changeInterval: 60, cost: 2, minFrequency: 1e-9, maxFrequency: 10 }], 1);
    expect(f[0]).toBeCloseTo(0.05, 10);
  });

  it('a budget below the floors gives the floors; one above the ceilings the ceilings', () => {
    const g = [
      { channels: 1, changeInterval: 60, cost: 1, minFrequency: 0.01, maxFrequency: 0.1 },
      { channels: 1, changeInterval: 120, cost: 1, minFrequency: 0.005, maxFrequency: 0.1 },
    ];
    expect(allocateFrequencies(g, 0)).toEqual([0.01, 0.005]);
    expect(allocateFrequencies(g, 5)).toEqual([0.1, 0.1]);
  });

  it('a channel that changes too fast to keep fresh at the price gets only its floor', () => {
    // θ = 1 and θ = 100, one channel each, cost 1, budget 0.02. At the slow channel's
    // f = 0.02 (r = 0.5) its marginal is (1 − 1.5·e^(−0.5))·100 = 9.02, above the
    // fast channel's best possible 1/λ = 1: the slow one takes everything but the floor.
    const floor = 1e-6;
    const g = [
      { channels: 1, changeInterval: 1, cost: 1, minFrequency: floor, maxFrequency: 10 },
      { channels: 1, changeInterval: 100, cost: 1, minFrequency: floor, maxFrequency: 10 },
    ];
    const f = allocateFrequencies(g, 0.02);
    expect(f[0]).toBe(floor);
    expect(f[1]).toBeCloseTo(0.02 - floor, 9);
    expect(marginal(100, 0.02)).toBeCloseTo(9.02, 2);
  });

  it('interior groups end with equal marginal freshness per unit of cost, and the split beats an even one', () => {
    const g = [
      { channels: 3, changeInterval: 60, cost: 2, minFrequency: 1e-9, maxFrequency: 10 },
      { channels: 5, changeInterval: 240, cost: 1, minFrequency: 1e-9, maxFrequency: 10 },
    ];
    const budget = 0.1;
    const f = allocateFrequencies(g, budget);
    expect(3 * f[0]! * 2 + 5 * f[1]! * 1).toBeCloseTo(budget, 9);
    expect(marginal(60, f[0]!) / 2).toBeCloseTo(marginal(240, f[1]!) / 1, 6);
    // The same budget split so each group gets the same frequency: 3·f·2 + 5·f = 0.1.
    const even = budget / 11;
    expect(meanFreshness(g, f)).toBeGreaterThan(meanFreshness(g, [even, even]));
  });

  it('rejects bad input', () => {
    expect(() => allocateFrequencies([{ channels: 1, changeInterval: 0, cost: 1, minFrequency: 1, maxFrequency: 1 }], 1)).toThrow(RangeError);
    expect(() => allocateFrequencies([{ channels: 1, changeInterval: 1, cost: 1, minFrequency: 1, maxFrequency: 1 }], -1)).toThrow(RangeError);
  });
});

describe('CAF', () => {
  function twoChannels(): RecrawlState {
    const s = createRecrawlState(
      [
        { changeInterval: 60, group: 0 },
        { changeInterval: 120, group: 1 },
      ],
      { strategy: 'caf', minInterval: 0 },
    );
    recordSubmit(s, 0, 0);
    recordSubmit(s, 1, 0);
    recordSuccess(s, 0, 10, 2);
    recordSuccess(s, 1, 20, 4);
    return s;
  }
  // The first round starts from the current intervals' demand: 1·2/60 + 1·4/120 = 1/15.
  const demand = 2 / 60 + 4 / 120;
  const spent = (s: RecrawlState) => (1 / s.groups[0]!.interval) * 2 + (1 / s.groups[1]!.interval) * 4;

  it('runs on a clock, not on the top group’s updates', () => {
    const s = twoChannels();
    expect(shouldReassign(s, 99)).toBe(false);
    expect(shouldReassign(s, 100)).toBe(true);
  });

  it('idle threads raise the budget by at most cafMaxStep (hand-computed)', () => {
    const s = twoChannels();
    // u = 5/10, q = 0: e = min(0.95 − 0.5, 0.9 − 0) = 0.45; exp(0.45) = 1.57 → capped at 1.25.
    observeLoad(s, { threads: 10, running: 5, queued: 0 });
    reassign(s, 100);
    expect(s.cafBudget).toBeCloseTo(demand * 1.25, 12);
    expect(spent(s)).toBeCloseTo(demand * 1.25, 9);
    // Split for freshness: equal marginal per unit of cost.
    expect(marginal(60, 1 / s.groups[0]!.interval) / 2).toBeCloseTo(marginal(120, 1 / s.groups[1]!.interval) / 4, 6);
  });

  it('full queues lower it (hand-computed)', () => {
    const s = twoChannels();
    // u = 1, q = 1: e = min(0.95 − 1, 0.9 − 1) = −0.1 → × e^(−0.1).
    observeLoad(s, { threads: 10, running: 10, queued: 10 });
    reassign(s, 100);
    expect(s.cafBudget).toBeCloseTo(demand * Math.exp(-0.1), 12);
  });

  it('without a load report it steers the success rate: 100% success against 85% → × e^(0.3)', () => {
    const s = twoChannels();
    reassign(s, 100);
    expect(s.cafBudget).toBeCloseTo(demand * Math.min(1.25, Math.exp(2 * (1 - 0.85))), 12);
  });

  it('never recrawls a group less than once per cafMaxStretch change intervals', () => {
    const s = twoChannels();
    observeLoad(s, { threads: 10, running: 10, queued: 10 });
    for (let t = 100; t <= 3000; t += 100) {
      observeLoad(s, { threads: 10, running: 10, queued: 10 });
      reassign(s, t);
    }
    expect(s.groups[0]!.interval).toBeCloseTo(8 * 60, 6);
    expect(s.groups[1]!.interval).toBeCloseTo(8 * 120, 6);
  });

  it("with a rate cap, a group's ceiling is its fastest-changing channel's cap, not its mean channel's", () => {
    // One group: channels changing every 30 and every 330 minutes (mean 180), cost 1 each, cap 2.
    const s = createRecrawlState(
      [
        { changeInterval: 30, group: 0 },
        { changeInterval: 330, group: 0 },
      ],
      { strategy: 'caf', minInterval: 0, rateCap: 2 },
      0,
      1,
    );
    recordSubmit(s, 0, 0);
    recordSuccess(s, 0, 10, 1);
    recordSubmit(s, 1, 0);
    recordSuccess(s, 1, 10, 1);
    // Idle threads for many rounds: the budget climbs until the ceiling binds.
    for (let t = 100; t <= 4000; t += 100) {
      observeLoad(s, { threads: 100, running: 0, queued: 0 });
      reassign(s, t);
    }
    // The ceiling is 2 / 30 (the fast channel's cap), not 2 / 180: the group interval
    // reaches 15 min; the per-channel cap then holds the slow channel at 165.
    expect(s.groups[0]!.interval).toBeCloseTo(15, 9);
    expect(channelInterval(s, 0)).toBeCloseTo(15, 9);
    expect(channelInterval(s, 1)).toBeCloseTo(165, 9);
  });

  it("by default recrawls a channel whose task found no room at its group's interval", () => {
    const s = twoChannels();
    s.groups[0]!.interval = 50;
    recordFailure(s, 0, 1, 'refused');
    recordFailure(s, 0, 2, 'expired');
    expect(channelInterval(s, 0)).toBe(50);
  });

  it('with cafBackoff, backs a channel off when its task finds no room or expires, and recovers on success', () => {
    const s = twoChannels();
    s.options.cafBackoff = 2;
    s.groups[0]!.interval = 50;
    recordFailure(s, 0, 1, 'refused');
    expect(channelInterval(s, 0)).toBe(100);
    recordFailure(s, 0, 2, 'expired');
    expect(channelInterval(s, 0)).toBe(200);
    recordFailure(s, 0, 3, 'lost'); // a departure says nothing about room
    expect(channelInterval(s, 0)).toBe(200);
    recordSuccess(s, 0, 4, 1); // 1 + (4 − 1)/2
    expect(channelInterval(s, 0)).toBe(125);
    for (let i = 0; i < 10; i++) recordFailure(s, 0, 5, 'refused');
    expect(channelInterval(s, 0)).toBe(50 * 16); // cafMaxBackoff
  });

  it('the budget follows the online threads between rounds (hand-computed)', () => {
    for (const follow of [true, false]) {
      const s = createRecrawlState(
        [
          { changeInterval: 60, group: 0 },
          { changeInterval: 120, group: 1 },
        ],
        { strategy: 'caf', minInterval: 0, cafFollowThreads: follow },
      );
      recordSuccess(s, 0, 10, 2);
      recordSuccess(s, 1, 20, 4);
      // u = 0.95, no queue: e = min(0.95 − 0.95, 0.9 − 0) = 0, the loop holds the budget.
      observeLoad(s, { threads: 20, running: 19, queued: 0 });
      reassign(s, 100);
      expect(s.cafBudget).toBeCloseTo(demand, 12);
      expect(s.cafThreads).toBe(20);
      // Half the threads left; those online are as busy as before: the budget halves with them.
      observeLoad(s, { threads: 10, running: 9.5, queued: 0 });
      reassign(s, 200);
      expect(s.cafBudget).toBeCloseTo(follow ? demand / 2 : demand, 12);
      expect(s.cafThreads).toBe(10);
    }
  });

  it('with cafCostExponent, recrawls a cheap channel of a group more often and a costly one less (hand-computed)', () => {
    const three = [
      { changeInterval: 60, group: 0 },
      { changeInterval: 60, group: 0 },
      { changeInterval: 60, group: 0 },
    ];
    for (const exponent of [0, 0.5]) {
      const s = createRecrawlState(three, { strategy: 'caf', minInterval: 0, cafCostExponent: exponent, cafCostSpread: 2 });
      // Download times 1, 4 and 16 (mean 7): factors (1/7)^½ → clamped to ½, (4/7)^½, (16/7)^½.
      recordSuccess(s, 0, 10, 1);
      recordSuccess(s, 1, 10, 4);
      recordSuccess(s, 2, 10, 16);
      observeLoad(s, { threads: 10, running: 9.5, queued: 0 });
      reassign(s, 100);
      const g = s.groups[0]!.interval;
      const want = exponent === 0 ? [1, 1, 1] : [0.5, Math.sqrt(4 / 7), Math.sqrt(16 / 7)];
      want.forEach((f, ch) => expect(channelInterval(s, ch)).toBeCloseTo(g * f, 9));
    }
  });

  it('lets a task wait cafWaitIntervals of its intervals; the paper\'s strategies one', () => {
    const one = [{ changeInterval: 60, group: 0 }];
    expect(waitIntervals(createRecrawlState(one, { strategy: 'caf', cafWaitIntervals: 3 }))).toBe(3);
    for (const strategy of ['fixed', 'iir', 'icr'] as const) expect(waitIntervals(createRecrawlState(one, { strategy, cafWaitIntervals: 3 }))).toBe(1);
  });

  it('other strategies ignore the failure kind', () => {
    const s = createRecrawlState([{ changeInterval: 60, group: 0 }], { strategy: 'iir' });
    recordFailure(s, 0, 1, 'refused');
    expect(channelInterval(s, 0)).toBe(60);
  });

  it('validates its options and survives a JSON round trip', () => {
    expect(() => recrawlOptions({ cafCostExponent: 1.5 })).toThrow(/cafCostExponent/);
    expect(() => recrawlOptions({ cafCostSpread: 0.5 })).toThrow(/cafCostSpread/);
    expect(() => recrawlOptions({ cafTargetUtilisation: 1.5 })).toThrow(/cafTargetUtilisation/);
    expect(() => recrawlOptions({ cafMaxStep: 1 })).toThrow(/cafMaxStep/);
    expect(() => recrawlOptions({ cafBackoff: 0.5 })).toThrow(/cafBackoff/);
    expect(() => recrawlOptions({ cafFollowThreads: 'yes' as unknown as boolean })).toThrow(/cafFollowThreads/);
    expect(() => recrawlOptions({ cafWaitIntervals: 0.5 })).toThrow(/cafWaitIntervals/);
    const s = twoChannels();
    observeLoad(s, { threads: 10, running: 5, queued: 0 });
    reassign(s, 100);
    expect(restoreState(serialiseState(s))).toEqual(s);
  });
});

describe('ICR encourage per group', () => {
  it('encourages only the groups whose own success rate beat their last (hand-computed)', () => {
    const s = createRecrawlState(
      [
        { changeInterval: 10, group: 0 },
        { changeInterval: 10, group: 0 },
        { changeInterval: 20, group: 1 },
        { changeInterval: 40, group: 2 },
      ],
      { encourageRate: 0.5, smallestMultiple: 1.25, biggestMultiple: 4, minInterval: 0, strategy: 'icr', icrEncourage: 'group' },
    );
    for (let ch = 0; ch < 4; ch++) {
      recordSubmit(s, ch, 0);
      recordSubmit(s, ch, 0);
    }
    const dl = [1, 1, 2, 4];
    for (let ch = 0; ch < 4; ch++) {
      recordSuccess(s, ch, 0, dl[ch]!);
      recordSuccess(s, ch, 50, dl[ch]!);
    }
    s.groups[2]!.lastSuccessRate = 1; // group 2's 100% does not beat its last
    // θ = 3.125 as in the system-wide case, without the system encourage; intervals
    // 31.25 / 62.5 / 125, groups 0 and 1 × 0.5 → 15.625 / 31.25 / 125 (125 = μ × 31.25).
    const r = reassign(s, 100)!;
    expect(r.theta).toBeCloseTo(3.125, 12);
    expect(r.encouraged).toEqual([true, true, false]);
    expect(r.intervals[0]).toBeCloseTo(15.625, 10);
    expect(r.intervals[1]).toBeCloseTo(31.25, 10);
    expect(r.intervals[2]).toBeCloseTo(125, 10);
  });
});
