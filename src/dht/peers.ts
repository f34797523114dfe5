// What this node knows about other crawlers: their last coordinate, load and
// measured RTT, learned from coordinate probes, info queries and task replies.
import type { Coordinate } from '../coords/index.js';
import type { WireCoord } from './signing.js';

export interface Load {
  running: number;
  queued: number;
  free: number;
  /** Threads it offers (reported since session 12; absent: inferred, src/manager/crawler-load.ts). */
  threads?: number;
}

export interface PeerState {
  id: string;
  coord?: Coordinate;
  load?: Load;
  /** Last measured RTT, ms (median-ish: exponentially smoothed). */
  rttMs?: number;
  /** Wall clock (performance.now) of the last update. */
  seenAt: number;
  /** When `coord` was last learned (performance.now). Not `seenAt`: a task
   * reply carries load only, and a crawler that receives a task a minute would
   * otherwise keep the coordinate it had when we first met it (#18). */
  coordAt?: number;
  /** When `load` was last learned (performance.now): a coordinate-only note
   * refreshes `seenAt` but not the load (the manager's load aggregate ages on this). */
  loadAt?: number;
  /** A crawler (runs tasks) rather than a manager or storage node. */
  crawler: boolean;
  /** Said goodbye or failed to answer: not a routing candidate until heard again. */
  down: boolean;
}

export function toWireCoord(c: Coordinate): WireCoord {
  return { vec: Array.from(c.vec), height: c.height, error: c.error };
}

export function fromWireCoord(w: WireCoord): Coordinate {
  return { vec: Float64Array.from(w.vec), height: w.height, error: w.error ?? 1.5 };
}

export function loadFraction(l: Load | undefined): number {
  if (l === undefined) return 0.5;
  const cap = l.running + l.queued + l.free;
  if (cap <= 0) return 1;
  return (l.running + l.queued) / cap;
}

export class PeerTable {
  private readonly peers = new Map<string, PeerState>();

  constructor(private readonly maxPeers = 4096) {}

  get(id: string): PeerState | undefined {
    return this.peers.get(id);
  }

  /** Merges what was learned about `id`. */
  note(id: string, patch: { coord?: Coordinate; load?: Load; rttMs?: number; crawler?: boolean }): PeerState {
    let p = this.peers.get(id);
    if (p === undefined) {
      if (this.peers.size >= this.maxPeers) this.evictOldest();
      p = { id, seenAt: performance.now(), crawler: patch.crawler ?? true, down: false };
      this.peers.set(id, p);
    }
    if (patch.coord !== undefined) {
      p.coord = patch.coord;
      p.coordAt = performance.now();
    }
    if (patch.load !== undefined) {
      p.load = patch.load;
      p.loadAt = performance.now();
    }
    if (patch.rttMs !== undefined) p.rttMs = p.rttMs === undefined ? patch.rttMs : 0.7 * p.rttMs + 0.3 * patch.rttMs;
    if (patch.crawler !== undefined) p.crawler = patch.crawler;
    p.seenAt = performance.now();
    p.down = false;
    return p;
  }

  markDown(id: string): void {
    const p = this.peers.get(id);
    if (p !== undefined) p.down = true;
  }

  delete(id: string): void {
    this.peers.delete(id);
  }

  all(): PeerState[] {
    return [...this.peers.values()];
  }

  /** Live crawlers with a known coordinate. */
  crawlers(): PeerState[] {
    return this.all().filter((p) => p.crawler && !p.down && p.coord !== undefined);
  }

  get size(): number {
    return this.peers.size;
  }

  private evictOldest(): void {
    let oldest: PeerState | undefined;
    for (const p of this.peers.values()) if (oldest === undefined || p.seenAt < oldest.seenAt) oldest = p;
    if (oldest !== undefined) this.peers.delete(oldest.id);
  }
}
