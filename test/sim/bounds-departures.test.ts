// The bound after departures (sim/bounds.ts): the capacity bound on the
// thread-minutes departing crawlers leave. It must stay an upper bound —
// never below any strategy's achieved value — on real runs across seeds and
// crawler counts, and be what its formula says on a hand-computed case.
import { describe, expect, it } from 'vitest';
import { computeBounds, leastLostShare, ofBound } from '../../sim/bounds.js';
import type { StrategyResult } from '../../sim/result.js';
import { runScenario } from '../../sim/run.js';
import type { World } from '../../sim/world.js';

/** Just what computeBounds reads of a result. */
function result(c: { threadMinutes: number; completed: number; completedMinutes: number; busyMinutes: number; lostMinutes: number }): StrategyResult {
  return {
    outcomes: { completed: c.completed, failed: 0, cancelled: 0, lost: 0, pendingAtEnd: 0 },
    capacity: { threadMinutes: c.threadMinutes, completedMinutes: c.completedMinutes, busyMinutes: c.busyMinutes, lostMinutes: c.lostMinutes, inProgressMinutes: 0, idleMinutes: 0, idleWaitingMinutes: 0 },
    updateQualityWeighted: 1,
    updateQuality: 1,
    freshness: 0.5,
  } as unknown as StrategyResult;
}

describe('the bound after departures, by hand', () => {
  // Two channels, one per group of a two-group world (weights 2, 1; intervals 60, 120 → R·θ 120 both).
  const world = { config: { hosts: 2, changeIntervals: [60, 120] }, group: [0, 1], changeInterval: [60, 120] } as unknown as World;
  const a = result({ threadMinutes: 1000, completed: 10, completedMinutes: 50, busyMinutes: 800, lostMinutes: 80 }); // d 5, λ 0.10
  const b = result({ threadMinutes: 1000, completed: 8, completedMinutes: 48, busyMinutes: 600, lostMinutes: 90 }); // d 6, λ 0.15

  it('takes the least lost share and the least task cost of the run', () => {
    expect(leastLostShare([a, b])).toBeCloseTo(0.1, 12);
    const bound = computeBounds(world, 100, [a, b])!;
    expect(bound.completions).toBeCloseTo(1000 / 5, 9);
    expect(bound.afterDepartures.lostShare).toBeCloseTo(0.1, 12);
    expect(bound.afterDepartures.completions).toBeCloseTo((1000 * 0.9) / 5, 9);
    // Weighted: the largest R·θ (120) per completion over N·T = 2 · 100.
    expect(bound.updateQualityWeighted).toBeCloseTo((120 * 200) / 200, 9);
    expect(bound.afterDepartures.updateQualityWeighted).toBeCloseTo((120 * 180) / 200, 9);
    expect(bound.afterDepartures.updateQuality).toBeCloseTo((120 * 180) / 200, 9);
    // Less capacity, no fresher copies.
    expect(bound.afterDepartures.freshness).toBeLessThanOrEqual(bound.freshness);
    const of = ofBound(a, bound);
    expect(of.afterDepartures.updateQualityWeighted).toBeCloseTo(of.updateQualityWeighted / 0.9, 12);
  });

  it('with no departure loss is the plain bound', () => {
    const none = result({ threadMinutes: 1000, completed: 10, completedMinutes: 50, busyMinutes: 800, lostMinutes: 0 });
    const bound = computeBounds(world, 100, [none, b])!;
    expect(bound.afterDepartures.lostShare).toBe(0);
    expect(bound.afterDepartures.updateQualityWeighted).toBe(bound.updateQualityWeighted);
    expect(bound.afterDepartures.freshness).toBe(bound.freshness);
  });
});

describe('the bound after departures on real runs', () => {
  // rec's quick world (2 000 channels, 175 crawlers), every strategy: three seeds,
  // and the sweep's smallest and a large size at the same scale (700 and 4 200
  // crawlers for 16 000 channels: 88 and 525): capacity short, and CAF flooding.
  const cases = [
    { seed: 1, crawlers: undefined },
    { seed: 2, crawlers: undefined },
    { seed: 3, crawlers: undefined },
    { seed: 1, crawlers: 88 },
    { seed: 1, crawlers: 525 },
  ];
  for (const c of cases) {
    it(`is never below any strategy's achieved value (seed ${c.seed}, ${c.crawlers ?? 'rec'} crawlers)`, () => {
      const r = runScenario({
        scenario: 'rec',
        strategies: ['fixed', 'iir', 'icr', 'caf'],
        routing: 'coord',
        seed: c.seed,
        quick: true,
        steps: 1500,
        ...(c.crawlers !== undefined ? { config: { crawlers: c.crawlers } } : {}),
      });
      const b = r.bounds!;
      const a = b.afterDepartures;
      // Departures cost every strategy something (crawlers leave mid-task), so the bound is tighter...
      expect(a.lostShare).toBeGreaterThan(0);
      expect(a.lostShare).toBeLessThan(0.5);
      expect(a.updateQualityWeighted).toBeLessThan(b.updateQualityWeighted);
      // ... and still above every strategy.
      for (const s of Object.values(r.strategies)) {
        expect(s!.capacity.lostMinutes / s!.capacity.busyMinutes).toBeGreaterThanOrEqual(a.lostShare - 1e-12);
        expect(s!.outcomes.completed).toBeLessThanOrEqual(a.completions + 1e-6);
        expect(s!.updateQualityWeighted).toBeLessThanOrEqual(a.updateQualityWeighted + 1e-9);
        expect(s!.updateQuality).toBeLessThanOrEqual(a.updateQuality + 1e-9);
        expect(s!.freshness).toBeLessThanOrEqual(a.freshness + 1e-9);
      }
    });
  }
});
