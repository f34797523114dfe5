// The check loop under the peer keeper and the manager link: every checkMs while
// all is well, a doubling gap (capped) while repairs fail, back to checkMs once
// one succeeds; nothing after stop().
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BackoffLoop } from '../../src/dht/backoff-loop.js';

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe('BackoffLoop', () => {
  it('checks every checkMs while well, doubles the gap up to the cap while repairs fail, and resets on success', async () => {
    const outcomes = [true, false, false, false, false, true, true];
    const at: number[] = [];
    const loop = new BackoffLoop(async () => {
      at.push(Date.now());
      const ok = outcomes.shift();
      if (ok === undefined) throw new Error('a step that throws counts as a failed repair');
      return ok;
    }, 1_000, 5_000);
    const t0 = Date.now();
    loop.start();
    expect(loop.running).toBe(true);
    await vi.advanceTimersByTimeAsync(40_000);
    const gaps = at.map((t, i) => t - (i === 0 ? t0 : at[i - 1]!));
    // well, fail ×4 (gaps 1 s, then 2, 4, 5 (cap), 5), well, well, then throws (failure: 2 s)…
    expect(gaps.slice(0, 8)).toEqual([1_000, 1_000, 2_000, 4_000, 5_000, 5_000, 1_000, 1_000]);
    expect(gaps[8]).toBe(2_000);
    loop.stop();
    expect(loop.running).toBe(false);
    const n = at.length;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(at.length).toBe(n);
  });
});
