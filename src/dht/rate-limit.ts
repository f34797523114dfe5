// Per-peer token buckets: each remote peer may spend `burst` messages at once and
// earns `perSecond` more every second. The table is bounded so that a flood of
// fresh peer ids cannot grow it without limit.
export interface RateLimitOptions {
  perSecond: number;
  burst: number;
  maxPeers?: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class PeerRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxPeers: number;

  constructor(
    private readonly opts: RateLimitOptions,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.maxPeers = opts.maxPeers ?? 10_000;
  }

  /** Takes one token for `peer`; false when the peer is over its rate. */
  take(peer: string): boolean {
    const t = this.now();
    let b = this.buckets.get(peer);
    if (b === undefined) {
      if (this.buckets.size >= this.maxPeers) {
        // Evict the oldest entry (Map iterates in insertion order).
        const first = this.buckets.keys().next();
        if (first.done !== true) this.buckets.delete(first.value);
      }
      b = { tokens: this.opts.burst, at: t };
      this.buckets.set(peer, b);
    } else {
      b.tokens = Math.min(this.opts.burst, b.tokens + ((t - b.at) / 1000) * this.opts.perSecond);
      b.at = t;
    }
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}
