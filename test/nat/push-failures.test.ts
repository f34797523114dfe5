// The manager's memory of failed pushes (src/dht/push-failures.ts): a volunteer
// whose pushes failed is told to pull for a hold that doubles while pushes keep
// failing after each hold, and is forgotten when a push gets an answer.
import { describe, expect, it } from 'vitest';
import { PushFailures } from '../../src/dht/push-failures.js';

describe('PushFailures', () => {
  it('advises a pull after a failed push, once per failure streak, with a hold that doubles up to its cap', () => {
    const f = new PushFailures({ holdMs: 1000, maxHoldMs: 3000, now: () => 0 });
    expect(f.advise('a')).toBe(0);
    f.failed('a');
    expect(f.failing).toBe(1);
    expect(f.advise('a')).toBe(1000);
    // The same failure does not advise twice: only new failures after the hold do.
    expect(f.advise('a')).toBe(0);
    f.failed('a');
    expect(f.advise('a')).toBe(2000);
    f.failed('a');
    expect(f.advise('a')).toBe(3000);
    f.failed('a');
    expect(f.advise('a')).toBe(3000);
    expect(f.advise('b')).toBe(0);
  });

  it('forgets a volunteer once a push to it is answered, and failures older than the window', () => {
    let t = 0;
    const f = new PushFailures({ holdMs: 1000, windowMs: 10_000, threshold: 2, now: () => t });
    f.failed('a');
    expect(f.advise('a')).toBe(0); // below the threshold
    f.failed('a');
    f.succeeded('a');
    expect(f.advise('a')).toBe(0);
    f.failed('a');
    t = 20_000;
    f.failed('a'); // the first is too old: a streak of one
    expect(f.advise('a')).toBe(0);
    f.failed('a');
    expect(f.advise('a')).toBe(1000);
    t = 40_000;
    expect(f.advise('a')).toBe(0);
  });

  it('keeps at most maxPeers volunteers, dropping the least recently failed', () => {
    const f = new PushFailures({ maxPeers: 2, now: () => 0 });
    f.failed('a');
    f.failed('b');
    f.failed('a');
    f.failed('c');
    expect(f.advise('b')).toBe(0);
    expect(f.advise('a')).toBeGreaterThan(0);
    expect(f.advise('c')).toBeGreaterThan(0);
  });
});
