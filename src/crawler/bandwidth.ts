// One bandwidth cap shared by all task threads: a token bucket in bytes/s.
// Threads take tokens after reading each body chunk and wait off any debt,
// which stops them reading and lets TCP flow control slow the sender.
import { setTimeout as sleep } from 'node:timers/promises';

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private rateBps: number,
    readonly burst = Math.max(rateBps, 16 * 1024),
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(rateBps > 0)) throw new RangeError(`bandwidth must be > 0 bytes/s, got ${rateBps}`);
    this.tokens = this.burst;
    this.last = now();
  }

  get rate(): number {
    return this.rateBps;
  }

  /** A new rate (the owner changed the cap): applies from the next take. */
  setRate(rate: number): void {
    if (!(rate > 0)) throw new RangeError(`bandwidth must be > 0 bytes/s, got ${rate}`);
    this.rateBps = rate;
  }

  /** Takes n bytes' worth of tokens, waiting while the bucket is in debt. */
  async take(n: number, signal?: AbortSignal): Promise<void> {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.rateBps) / 1000);
    this.last = t;
    this.tokens -= n;
    if (this.tokens < 0) {
      const waitMs = (-this.tokens / this.rateBps) * 1000;
      await sleep(waitMs, undefined, signal ? { signal } : undefined);
    }
  }
}
