import { describe, expect, it } from 'vitest';
import {
  assignGroups,
  channelHistory,
  channelInterval,
  checkPriorities,
  createRecrawlState,
  groupInterval,
  icrIntervals,
  icrTheta,
  maybeReassign,
  reassign,
  recordFailure,
  recordSubmit,
  recordSuccess,
  recrawlOptions,
  restoreState,
  serialiseState,
  shouldReassign,
  type RecrawlState,
} from '../../src/recrawl/index.js';

const base = { encourageRate: 0.5, smallestMultiple: 1.25, biggestMultiple: 4, minInterval: 0, maxRoundGap: null };

function submits(s: RecrawlState, ch: number, n: number, t = 0): void {
  for (let i = 0; i < n; i++) recordSubmit(s, ch, t);
}
function successes(s: RecrawlState, ch: number, n: number, t: number, dl = 1): void {
  for (let i = 0; i < n; i++) recordSuccess(s, ch, t, dl);
}

describe('checkPriorities', () => {
  it('raises a lower group to σ × the group above and caps it at μ ×', () => {
    expect(checkPriorities([60, 50, 300, 2000], 1.25, 4)).toEqual([60, 75, 300, 1200]);
  });
  it('leaves ordered intervals inside the bounds alone', () => {
    expect(checkPriorities([60, 120, 240], 1.25, 4)).toEqual([60, 120, 240]);
  });
  it('applies the bounds in cascade (a raised group lifts the next lower bound)', () => {
    expect(checkPriorities([100, 10, 10], 2, 3)).toEqual([100, 200, 400]);
  });
});

describe('IIR', () => {
  function twoGroups(): RecrawlState {
    return createRecrawlState(
      [
        { changeInterval: 10, group: 0 },
        { changeInterval: 10, group: 0 },
        { changeInterval: 20, group: 1 },
        { changeInterval: 20, group: 1 },
      ],
      { ...base, strategy: 'iir', triggerUpdates: 1, triggerFraction: 0.5 },
    );
  }

  it('starts at the mean change interval of each group', () => {
    const s = twoGroups();
    expect(groupInterval(s, 0)).toBe(10);
    expect(groupInterval(s, 1)).toBe(20);
  });

  it('reassigns means of hIntervals with the encourage step and checkPriorities (hand-computed)', () => {
    const s = twoGroups();
    submits(s, 0, 4);
    submits(s, 1, 4);
    submits(s, 2, 2);
    submits(s, 3, 2);
    successes(s, 0, 1, 30);
    expect(shouldReassign(s, 30)).toBe(false); // no top channel has > 1 update yet
    successes(s, 0, 1, 60);
    successes(s, 1, 4, 70);
    successes(s, 2, 1, 80);
    recordFailure(s, 3, 90);
    expect(shouldReassign(s, 100)).toBe(true);
    const r = maybeReassign(s, 100)!;
    // g0: ch0 gaps 30 (from creation), 30 → 30; ch1 gaps 70, 0, 0, 0 → 17.5; mean 23.75;
    //     rate 6/8 > 0 → × 0.5 = 11.875
    // g1: ch2 gap 80 → 80; ch3 no update → no say; rate 1/4 > 0 → 40 ≤ 4 × 11.875
    expect(r.intervals).toEqual([11.875, 40]);
    expect(r.encouraged).toEqual([true, true]);
    expect(s.channels[0]!.subCount).toBe(0);
    expect(s.windowStart).toBe(100);

    submits(s, 0, 2);
    submits(s, 1, 2);
    submits(s, 2, 1);
    submits(s, 3, 1);
    successes(s, 0, 1, 150);
    successes(s, 1, 2, 160);
    successes(s, 2, 1, 170);
    const r2 = reassign(s, 200)!;
    // g0: ch0 gap 150 − 60 = 90; ch1 gaps 90, 0 → 45; mean 67.5; rate 3/4 = 0.75 not > 0.75
    // g1: ch2 gap 170 − 80 = 90; rate 1/2 > 1/4 → 45 < 67.5 → raised to 1.25 × 67.5 = 84.375
    expect(r2.intervals).toEqual([67.5, 84.375]);
    expect(r2.encouraged).toEqual([false, true]);
    expect(groupInterval(s, 1)).toBe(84.375);
  });

  it('caps a lower group at μ × the group above; a group without updates keeps its interval', () => {
    const s = twoGroups();
    submits(s, 0, 10);
    submits(s, 1, 10);
    successes(s, 0, 10, 50);
    successes(s, 1, 10, 50);
    // g0: gaps 50, 0 × 9 → 5 per channel → × 0.5 = 2.5; g1: no updates → keeps 20 > 4 × 2.5 → 10
    const r = reassign(s, 100)!;
    expect(r.intervals).toEqual([2.5, 10]);
    expect(r.successRates[1]).toBeNull();
  });

  it('fires on maxRoundGap when the top group is starved', () => {
    const s = createRecrawlState([{ changeInterval: 10, group: 0 }], { strategy: 'iir', maxRoundGap: 50 });
    expect(shouldReassign(s, 49)).toBe(false);
    expect(shouldReassign(s, 50)).toBe(true);
  });
});

describe('ICR', () => {
  it('θ from equation (4) on a worked example', () => {
    // Three groups, ω = 2, Δt = 10. Σt̄ per group: 2, 2, 4 → numerator 2 + 2/2 + 4/4 = 4.
    // Demand at θ = 1 is 2/10 + 2/20 + 4/40 = 0.4; the system delivered 0.2 → θ = 4 / (10 × 0.2) = 2.
    expect(icrTheta([2, 2, 4], [2, 2], 10, 0.2)).toBe(2);
    expect(icrIntervals(2, 10, [2, 2], 3)).toEqual([20, 40, 80]);
    // At θ = 2 the demand Σ t̄ / ΔT equals the delivered load.
    expect(2 / 20 + 2 / 40 + 4 / 80).toBeCloseTo(0.2, 12);
  });

  it('reassigns from the last L updates with the encourage step (hand-computed)', () => {
    const s = createRecrawlState(
      [
        { changeInterval: 10, group: 0 },
        { changeInterval: 10, group: 0 },
        { changeInterval: 20, group: 1 },
        { changeInterval: 40, group: 2 },
      ],
      { ...base, strategy: 'icr' },
    );
    expect(s.deltaT).toBe(10);
    expect(s.omegas).toEqual([2, 2]);
    for (let ch = 0; ch < 4; ch++) submits(s, ch, 2);
    const dl = [1, 1, 2, 4];
    for (let ch = 0; ch < 4; ch++) {
      recordSuccess(s, ch, 0, dl[ch]!);
      recordSuccess(s, ch, 50, dl[ch]!);
    }
    // Two updates 50 apart, now = 100: λ = 2 / (100 − 0 + 50/2) = 0.016 per channel;
    // load = (1 + 1 + 2 + 4) × 0.016 = 0.128; θ = 4 / (10 × 0.128) = 3.125;
    // success 8/8 > 0 → θ × 0.5 = 1.5625 → intervals 15.625, 31.25, 62.5.
    const r = reassign(s, 100)!;
    expect(r.observedLoad).toBeCloseTo(0.128, 12);
    expect(r.theta).toBeCloseTo(1.5625, 12);
    expect(r.intervals[0]).toBeCloseTo(15.625, 10);
    expect(r.intervals[1]).toBeCloseTo(31.25, 10);
    expect(r.intervals[2]).toBeCloseTo(62.5, 10);
  });

  it('credits a single recent update with half a current interval of extra exposure', () => {
    const s = createRecrawlState([{ changeInterval: 10, group: 0 }], { strategy: 'icr' });
    recordSuccess(s, 0, 99, 1);
    expect(channelHistory(s.channels[0]!, 100, 10).rate).toBeCloseTo(1 / 6, 12);
  });

  it('keeps only the last L updates', () => {
    const s = createRecrawlState([{ changeInterval: 10, group: 0 }], { strategy: 'icr', historyLength: 3 });
    for (let i = 0; i < 5; i++) recordSuccess(s, 0, i, i);
    expect(s.channels[0]!.updateTimes).toEqual([2, 3, 4]);
    expect(s.channels[0]!.downloadTimes).toEqual([2, 3, 4]);
  });
});

describe('state and options', () => {
  it('FIXED never changes', () => {
    const s = createRecrawlState([{ changeInterval: 60, group: 0 }], { strategy: 'fixed', maxRoundGap: 1 });
    successes(s, 0, 10, 5);
    expect(maybeReassign(s, 1000)).toBeNull();
    expect(groupInterval(s, 0)).toBe(60);
  });

  it('applies the per-channel rate cap and the floor', () => {
    const s = createRecrawlState(
      [
        { changeInterval: 60, group: 0 },
        { changeInterval: 100, group: 0 },
      ],
      { strategy: 'iir', rateCap: 2, minInterval: 40 },
    );
    s.groups[0]!.interval = 20;
    expect(channelInterval(s, 0)).toBe(40); // 60/2 = 30 < floor 40
    expect(channelInterval(s, 1)).toBe(50); // 100/2
  });

  it('round-trips through JSON', () => {
    const s = createRecrawlState([{ changeInterval: 60 }, { changeInterval: 120 }], { strategy: 'icr' }, 0, 2);
    recordSuccess(s, 1, 3, 0.5);
    const back = restoreState(serialiseState(s));
    expect(back).toEqual(s);
  });

  it('restores a state persisted before gapSum/createdAt existed', () => {
    const s = createRecrawlState([{ changeInterval: 60, group: 0 }], { strategy: 'iir' }, 7);
    const old = JSON.parse(serialiseState(s)) as Record<string, unknown> & { channels: Record<string, unknown>[] };
    delete old.createdAt;
    delete old.channels[0]!.gapSum;
    const back = restoreState(JSON.stringify(old));
    expect(back.createdAt).toBe(7);
    expect(back.channels[0]!.gapSum).toBe(0);
  });

  it('groups by change interval when none are given', () => {
    expect(assignGroups([960, 60, 240, 120], 2)).toEqual([1, 0, 1, 0]);
  });

  it('rejects bad options', () => {
    expect(() => recrawlOptions({ encourageRate: 1.5 })).toThrow(/encourageRate/);
    expect(() => recrawlOptions({ smallestMultiple: 2, biggestMultiple: 1 })).toThrow(/biggestMultiple/);
  });
});
