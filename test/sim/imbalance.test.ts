// The load imbalance's yardsticks (sim/imbalance.ts): what a placement in
// proportion to capacity would give, and how unevenly pages followed capacity.
import { describe, expect, it } from 'vitest';
import { imbalanceOf, imbalanceYardsticks, OnlineMinutes, pagesPerMinute, type CapacityWorld } from '../../sim/imbalance.js';

const WORLD: CapacityWorld = { bandwidthKbps: [512, 2048, 2048], threads: 5, waitMs: 200, meanPageBytes: 12 * 1024 };

describe('load imbalance yardsticks', () => {
  it('a faster link fetches more pages a minute, not in plain proportion (the wait is per page)', () => {
    const slow = pagesPerMinute(512, WORLD);
    const fast = pagesPerMinute(2048, WORLD);
    // 12 KB at 102.4 kbit/s a thread: 960 ms + 200 ms wait; at 409.6: 240 + 200.
    expect(slow).toBeCloseTo((5 * 60_000) / 1160, 6);
    expect(fast).toBeCloseTo((5 * 60_000) / 440, 6);
  });

  it('(max − mean) / mean, over the kept indices only', () => {
    expect(imbalanceOf([1, 1, 4])).toBeCloseTo(1, 12);
    expect(imbalanceOf([1, 1, 4], (i) => i < 2)).toBe(0);
    expect(imbalanceOf([0, 0])).toBe(0);
  });

  it('pages in proportion to capacity: the ideal is the capacity spread, per capacity 0', () => {
    const online = [1000, 1000, 500];
    const cap = online.map((m, c) => m * pagesPerMinute(WORLD.bandwidthKbps[c]!, WORLD));
    const pages = cap.map((x) => 3 * x);
    const y = imbalanceYardsticks(pages, online, 1000, WORLD);
    expect(y.ideal).toBeCloseTo(imbalanceOf(cap), 12);
    expect(y.ideal).toBeGreaterThan(0.3);
    expect(y.perCapacity).toBeCloseTo(0, 12);
  });

  it('equal pages on unequal crawlers: per capacity shows the slow one overloaded; a crawler online briefly is left out', () => {
    const y = imbalanceYardsticks([100, 100, 100], [1000, 1000, 1000], 1000, WORLD);
    const slow = 1 / pagesPerMinute(512, WORLD);
    const fast = 1 / pagesPerMinute(2048, WORLD);
    const mean = (slow + 2 * fast) / 3;
    expect(y.perCapacity).toBeCloseTo((slow - mean) / mean, 9);
    // The slow crawler online for 10 minutes of 1000: its ratio is noise, not counted.
    expect(imbalanceYardsticks([100, 100, 100], [10, 1000, 1000], 1000, WORLD).perCapacity).toBeCloseTo(0, 12);
  });

  it('online minutes add up each session, and close() counts whoever is still online', () => {
    const m = new OnlineMinutes(3);
    m.join(0, 0);
    m.leave(0, 10);
    m.join(0, 20);
    m.join(1, 5);
    m.join(1, 7); // a second join while online changes nothing
    m.leave(2, 9); // a leave while offline neither
    m.close(50);
    expect(Array.from(m.minutes)).toEqual([40, 45, 0]);
  });
});
