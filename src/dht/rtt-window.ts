// The RTT that feeds Vivaldi for each peer: the minimum of its last few
// samples, not the latest. Queueing only ever adds delay, so the minimum (as
// ping's min RTT) is the path's; but only samples from the last `windowMs`
// count, so an RTT that grew (a peer moved) shows within minutes even when the
// peer is probed rarely. Apart from coord-protocol.ts because it is a small
// bounded per-peer store with one rule, not part of the probing schedule.

export class RttWindows {
  private readonly windows = new Map<string, { at: number; rttMs: number }[]>();

  /** `size` samples per peer are kept, none older than `windowMs` (one always). */
  constructor(
    private readonly size = 4,
    private readonly windowMs = 300_000,
    /** Peers tracked at most (the oldest-added is forgotten first). */
    private readonly maxPeers = 4096,
  ) {}

  /** Records a sample to `peer` taken at `now` (performance.now()); returns the window's minimum. */
  add(peer: string, now: number, rttMs: number): number {
    let w = this.windows.get(peer);
    if (w === undefined) {
      if (this.windows.size >= this.maxPeers) this.windows.delete(this.windows.keys().next().value!);
      w = [];
      this.windows.set(peer, w);
    }
    w.push({ at: now, rttMs });
    const horizon = now - this.windowMs;
    while (w.length > 1 && (w.length > this.size || w[0]!.at < horizon)) w.shift();
    return Math.min(...w.map((x) => x.rttMs));
  }

  forget(peer: string): void {
    this.windows.delete(peer);
  }
}
