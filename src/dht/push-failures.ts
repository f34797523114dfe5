// Which volunteers the manager cannot push to (docs/nat.md, "Pull when pushes
// fail"). A volunteer behind NAT that holds a relay reservation is pushed its
// orders: over its own connection to the manager, else through its relay. When
// a push fails anyway (the relay refuses the circuit or has lost the
// reservation, the connection died under it), the manager re-routes the order,
// but the volunteer would never know and would sit idle. So the manager
// remembers the failed pushes per volunteer, and the next time that volunteer
// reports its state (NATed volunteers re-report every minute) the reply tells
// it to pull its tasks for a while (src/dht/task-pull.ts). After that hold the
// volunteer is pushed to again; if pushes fail again, it is told again, for
// twice as long (up to `maxHoldMs`); a push that succeeds forgets it all.
// Plain data and an injected clock: no libp2p here.

export interface PushFailureOptions {
  /** Failed pushes in a row before the volunteer is told to pull (default 1: pulling costs little, a lost order more). */
  threshold?: number;
  /** Failures older than this are forgotten, ms (default 10 min). */
  windowMs?: number;
  /** The first hold, ms (default 2 min); each further one doubles, up to `maxHoldMs` (default 30 min). */
  holdMs?: number;
  maxHoldMs?: number;
  /** Volunteers remembered at most (the oldest is dropped). */
  maxPeers?: number;
  now?: () => number;
}

interface PeerRecord {
  /** Failed pushes since the last success or the last advice. */
  fails: number;
  lastAt: number;
  /** Holds advised so far (the next one is holdMs × 2^holds). */
  holds: number;
}

export class PushFailures {
  private readonly peers = new Map<string, PeerRecord>();
  private readonly now: () => number;

  constructor(private readonly o: PushFailureOptions = {}) {
    this.now = o.now ?? (() => performance.now());
  }

  /** A push to `peer` failed in transport (no reply came: not a 'full' or 'rejected' answer). */
  failed(peer: string): void {
    const r = this.peers.get(peer) ?? { fails: 0, lastAt: 0, holds: 0 };
    this.peers.delete(peer); // re-inserted last: the oldest entry is the least recent
    r.fails = this.now() - r.lastAt > (this.o.windowMs ?? 600_000) ? 1 : r.fails + 1;
    r.lastAt = this.now();
    this.peers.set(peer, r);
    if (this.peers.size > (this.o.maxPeers ?? 100_000)) this.peers.delete(this.peers.keys().next().value!);
  }

  /** A push to `peer` got an answer: pushes work, nothing to advise. */
  succeeded(peer: string): void {
    this.peers.delete(peer);
  }

  /** How long `peer` should pull its tasks, ms (0: pushes are fine). Advising starts a hold: the failures
   * counted so far are used up, and only new ones after it lead to the next (longer) hold. */
  advise(peer: string): number {
    const r = this.peers.get(peer);
    if (r === undefined || r.fails < (this.o.threshold ?? 1) || this.now() - r.lastAt > (this.o.windowMs ?? 600_000)) return 0;
    const ms = Math.min(this.o.maxHoldMs ?? 1_800_000, (this.o.holdMs ?? 120_000) * 2 ** r.holds);
    r.fails = 0;
    r.holds++;
    return ms;
  }

  /** Volunteers with failed pushes not yet advised (a status figure). */
  get failing(): number {
    let n = 0;
    for (const r of this.peers.values()) if (r.fails > 0) n++;
    return n;
  }
}
