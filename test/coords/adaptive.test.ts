// The adaptive probing pace: pure, so driven here with synthetic samples.
import { describe, expect, it } from 'vitest';
import { AdaptiveProbing, adaptiveProbeOptions, sampleAgrees, DEFAULT_ADAPTIVE_PROBE } from '../../src/coords/index.js';
import { createRng } from '../../src/rng.js';

const pace = (o = {}) => new AdaptiveProbing({ jitter: 0, ...o }, createRng(1));

describe('adaptive probing pace', () => {
  it('validates its options and names the bad one', () => {
    expect(adaptiveProbeOptions()).toEqual(DEFAULT_ADAPTIVE_PROBE);
    expect(() => adaptiveProbeOptions({ maxIntervalMs: 10, minIntervalMs: 100 })).toThrow(/maxIntervalMs/);
    expect(() => adaptiveProbeOptions({ growth: 1 })).toThrow(/growth/);
    expect(() => adaptiveProbeOptions({ shrink: 0.5 })).toThrow(/shrink/);
    expect(() => adaptiveProbeOptions({ jitter: 1 })).toThrow(/jitter/);
    expect(() => adaptiveProbeOptions({ fastFanout: 0 })).toThrow(/fastFanout/);
    expect(() => adaptiveProbeOptions({ bogus: 1 } as never)).toThrow(/unknown option 'bogus'/);
  });

  it('agreement is relative, with an absolute floor for sub-millisecond RTTs', () => {
    const o = { agreeError: 0.15, agreeToleranceMs: 5 };
    expect(sampleAgrees(110, 100, o)).toBe(true);
    expect(sampleAgrees(120, 100, o)).toBe(false);
    expect(sampleAgrees(12, 100 / 9, { agreeError: 0.01, agreeToleranceMs: 2 })).toBe(true);
    // 0.3 ms against 4 ms predicted is a 1200% error, and nothing at all on a LAN.
    expect(sampleAgrees(4, 0.3, o)).toBe(true);
  });

  it('probes at full speed through the warm-up, whatever the samples say', () => {
    const p = pace({ warmupSamples: 5 });
    for (let i = 0; i < 5; i++) p.observe(100, 100);
    expect(p.fast).toBe(true);
    expect(p.fanout()).toBe(DEFAULT_ADAPTIVE_PROBE.fastFanout);
    expect(p.nextDelay()).toBe(DEFAULT_ADAPTIVE_PROBE.minIntervalMs);
  });

  it('backs off to the longest gap while samples agree, one probe a round', () => {
    const p = pace();
    let n = 0;
    while (p.intervalMs < DEFAULT_ADAPTIVE_PROBE.maxIntervalMs && n < 100) {
      p.observe(100, 103);
      n++;
    }
    expect(p.intervalMs).toBe(DEFAULT_ADAPTIVE_PROBE.maxIntervalMs);
    // 1 s to 30 s at ×1.5 a sample: 9 agreeing samples after the warm-up.
    expect(n).toBe(DEFAULT_ADAPTIVE_PROBE.warmupSamples + 9);
    expect(p.settled).toBe(true);
    expect(p.fanout()).toBe(1);
  });

  it('speeds up again when RTTs stop fitting the coordinates (something moved)', () => {
    const p = pace();
    for (let i = 0; i < 30; i++) p.observe(100, 100);
    expect(p.intervalMs).toBe(30_000);
    // A peer moved: its RTT is now 300 ms where the coordinates say 100.
    const gaps: number[] = [];
    for (let i = 0; i < 6; i++) {
      p.observe(100, 300);
      gaps.push(p.intervalMs);
    }
    expect(gaps).toEqual([15_000, 7_500, 3_750, 1_875, 1_000, 1_000]);
    expect(p.fast).toBe(true);
  });

  it('holds a long gap when most samples agree and a short one when most do not', () => {
    const run = (agreeShare: number) => {
      const p = pace();
      const rng = createRng(9);
      for (let i = 0; i < 2000; i++) p.observe(100, rng.next() < agreeShare ? 100 : 200);
      return p.intervalMs;
    };
    expect(run(0.9)).toBeGreaterThan(10_000);
    expect(run(0.3)).toBeLessThan(2_000);
  });

  it('a busy host probes no faster than its busy gap, one probe a round, and returns to full speed when no longer busy', () => {
    const p = pace({ busyIntervalMs: 5_000 });
    expect(p.fast).toBe(true);
    expect(p.fanout(true)).toBe(1);
    expect(p.nextDelay(true)).toBe(5_000);
    expect(p.fanout(false)).toBe(DEFAULT_ADAPTIVE_PROBE.fastFanout);
    expect(p.nextDelay(false)).toBe(1_000);
    // Backed off beyond the busy gap already: busy changes nothing.
    for (let i = 0; i < 30; i++) p.observe(100, 100);
    expect(p.nextDelay(true)).toBe(30_000);
    // The busy gap is kept inside [min, max] whatever is asked.
    expect(adaptiveProbeOptions({ minIntervalMs: 200, maxIntervalMs: 2_000 }).busyIntervalMs).toBe(2_000);
    expect(adaptiveProbeOptions({ minIntervalMs: 8_000, maxIntervalMs: 30_000 }).busyIntervalMs).toBe(8_000);
    expect(() => adaptiveProbeOptions({ busyIntervalMs: 0 })).toThrow(/busyIntervalMs/);
  });

  it('jitters each gap within the configured spread', () => {
    const p = new AdaptiveProbing({ jitter: 0.2 }, createRng(3));
    const delays = Array.from({ length: 200 }, () => p.nextDelay());
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(800);
    expect(Math.max(...delays)).toBeLessThanOrEqual(1200);
    expect(new Set(delays.map((d) => Math.round(d))).size).toBeGreaterThan(50);
  });
});
