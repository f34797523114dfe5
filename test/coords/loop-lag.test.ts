// Which RTT samples a stalled event loop spoiled: pure, driven with synthetic ticks.
import { describe, expect, it } from 'vitest';
import { LoopLag, loopLagOptions, spoiledBy, DEFAULT_LOOP_LAG } from '../../src/coords/index.js';
import { createRng } from '../../src/rng.js';

/** A tracker fed by a 50 ms timer from `t0` to `t1` that fired late by `stall(at)` ms. */
function ticks(lag: LoopLag, t0: number, t1: number, stall: (at: number) => number = () => 0): void {
  let at = t0;
  while (at < t1) {
    const late = stall(at);
    at += lag.opts.tickMs + late;
    lag.record(at, late);
  }
}

describe('loop lag', () => {
  it('validates its options and names the bad one', () => {
    expect(loopLagOptions()).toEqual(DEFAULT_LOOP_LAG);
    expect(() => loopLagOptions({ tickMs: 0 })).toThrow(/tickMs/);
    expect(() => loopLagOptions({ keep: 0.5 })).toThrow(/keep/);
    expect(() => loopLagOptions({ fraction: -1 })).toThrow(/fraction/);
    expect(() => loopLagOptions({ bogus: 1 } as never)).toThrow(/unknown option 'bogus'/);
  });

  it('a stall spoils a sample only when it is long against the RTT measured', () => {
    const o = { toleranceMs: 10, fraction: 0.1 };
    expect(spoiledBy(5, 2, o)).toBe(false);
    expect(spoiledBy(30, 2, o)).toBe(true);
    // 30 ms of stall on a 400 ms transatlantic RTT is within the sample's own noise.
    expect(spoiledBy(30, 400, o)).toBe(false);
    expect(spoiledBy(300, 400, o)).toBe(true);
  });

  it('finds the stall that overlapped a probe, and only that one', () => {
    const lag = new LoopLag();
    // A 400 ms stall that ends at t = 1 450 (the tick due at 1 050 fired at 1 450).
    ticks(lag, 0, 5_000, (at) => (at >= 1_000 && at < 1_050 ? 400 : 0));
    expect(lag.stallDuring(1_100, 1_300)).toBe(400);
    expect(lag.stallDuring(1_400, 1_700)).toBe(400);
    expect(lag.stallDuring(2_000, 2_200)).toBe(0);
    expect(lag.stallDuring(500, 900)).toBe(0);
    // A reply read as the stall ended (just before or after its tick) waited
    // for it; one read later, or one whose own RTT dwarfs the stall, did not.
    expect(lag.stallAt(1_450)).toBe(400);
    expect(lag.stallAt(1_430)).toBe(400);
    expect(lag.stallAt(1_480)).toBe(400);
    expect(lag.stallAt(1_600)).toBe(0);
    expect(lag.spoils(1_460, 260)).toBe(true);
    expect(lag.spoils(1_700, 700)).toBe(false);
    expect(lag.spoils(1_450, 5_000)).toBe(false);
    // The responder's own stall counts too.
    expect(lag.spoils(2_260, 260, 200)).toBe(true);
  });

  it('is busy while its loop is late for more than busyShare of recentMs, not for one long stall', () => {
    const lag = new LoopLag({ busyShare: 0.1, recentMs: 10_000 });
    const rng = createRng(4);
    // Ticks late by 0–6 ms (about 5 % of the time): an ordinary loaded loop, not busy.
    ticks(lag, 0, 20_000, () => Math.floor(rng.next() * 6));
    expect(lag.lateShare(20_000)).toBeGreaterThan(0.02);
    expect(lag.busy(20_000)).toBe(false);
    // One 600 ms garbage collection: a long stall, yet not a busy host.
    ticks(lag, 20_000, 30_000, (at) => (at >= 21_000 && at < 21_050 ? 600 : 0));
    expect(lag.recent(30_000)).toBe(600);
    expect(lag.busy(30_000)).toBe(false);
    // The owner's work starves the process: every tick 20–40 ms late.
    ticks(lag, 30_000, 40_000, () => 20 + Math.floor(rng.next() * 20));
    expect(lag.busy(40_000)).toBe(true);
    // And calm again once that is older than recentMs.
    ticks(lag, 40_000, 51_000);
    expect(lag.busy(51_000)).toBe(false);
  });

  it('keeps a bounded number of ticks', () => {
    const lag = new LoopLag({ keep: 10 });
    ticks(lag, 0, 1_000, (at) => (at < 60 ? 300 : 0));
    // The stall's tick was overwritten by later ones.
    expect(lag.stallDuring(0, 1_000)).toBe(0);
  });
});
