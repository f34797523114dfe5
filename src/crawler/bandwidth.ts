// One bandwidth cap shared by all task threads: a token bucket in bytes/s.
// Threads take tokens after reading each body chunk and wait off any debt,
// which stops them reading and lets TCP flow control slow the sender.
import { setTimeout as sleep } from 'node:timers/promises';

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly rate: number,
    readonly burst = Math.max(rate, 16 * 1024),
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(rate > 0)) throw new RangeError(`bandwidth must be > 0 bytes/s, got ${rate}`);
    this.tokens = this.burst;
    this.last = now();
  }

  /** Takes n bytes' worth of tokens, waiting while the bucket is in debt. */
  async take(n: number, signal?: AbortSignal): Promise<void> {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.rate) / 1000);
    this.last = t;
    this.tokens -= n;
    if (this.tokens < 0) {
      const waitMs = (-this.tokens / this.rate) * 1000;
      await sleep(waitMs, undefined, signal ? { signal } : undefined);
    }
  }
}
