// The bounded set of peers a node measures RTTs to for Vivaldi: its `near`
// nearest crawlers by predicted RTT (they sharpen the local geometry, which
// is what routing to a nearby crawler needs) and `far` crawlers drawn at
// random (they keep the global geometry right, as in Vivaldi's paper). Every
// `rotateEvery` picks, and at most once per `rotateMinMs`, one far member is
// swapped for a peer outside the set, so the node keeps meeting new peers
// without probing — and connecting to — everyone it knows. The time floor
// matters while probing is fast: every swap is a new connection (a Noise
// handshake, identify, a kad-dht routing-table update on both sides), and at
// two probes a second a pick-count alone swapped every 4 s — bench:routing
// counted ~10 new connections per node and minute on a 100-node network.
//
// The near part is sticky for the same reason. Recomputed from scratch each
// round, the nearest 8 of ~100 crawlers by *predicted* RTT changed whenever
// the coordinates moved a little — and while a network settles they move all
// the time — and it emptied whenever the node's own estimate looked
// unsettled again (its error crossing the threshold back and forth), which
// refilled every slot at random: each change a new peer to dial, each old one
// a connection for the trimmer. So a near member stays while it is live; a
// free slot takes the nearest candidate outside; and a member is swapped for
// an outsider only when the outsider is predicted clearly nearer (by
// `nearMargin` of the member's predicted RTT and at least `nearMarginMs`),
// one swap per update. While the node's own coordinate is unsettled the
// near part keeps its members (it is not emptied) and takes no new ones.
// Plain data in, ids out: the coordinate service keeps the
// libp2p side (connections, tags).
import { predictRtt, type Coordinate } from '../coords/index.js';
import type { Rng } from '../rng.js';

export interface NeighbourOptions {
  /** Nearest crawlers kept (by predicted RTT), once this node's coordinate is settled. */
  near: number;
  /** Random crawlers kept. */
  far: number;
  /** Picks between swaps of one far member for a peer outside the set. */
  rotateEvery: number;
  /** Shortest time between two swaps, ms (when the caller passes the time). */
  rotateMinMs: number;
  /** A near member is swapped for an outsider only when the outsider's predicted RTT is below the member's by this fraction of it… */
  nearMargin: number;
  /** …and by at least this many ms (co-located peers a fraction of a ms apart are not worth a new connection). */
  nearMarginMs: number;
}

export const DEFAULT_NEIGHBOURS: Readonly<NeighbourOptions> = Object.freeze({ near: 8, far: 8, rotateEvery: 8, rotateMinMs: 60_000, nearMargin: 0.25, nearMarginMs: 5 });

/** Defaults merged with `partial`, validated; throws RangeError naming the bad option. */
export function neighbourOptions(partial: Partial<NeighbourOptions> = {}): NeighbourOptions {
  const o = { ...DEFAULT_NEIGHBOURS, ...Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) };
  for (const k of ['near', 'far', 'rotateEvery'] as const) {
    if (!Number.isInteger(o[k]) || o[k] < 0 || o[k] > 1024) throw new RangeError(`neighbourOptions: ${k} must be an integer in 0..1024, got ${o[k]}`);
  }
  if (o.near + o.far < 1) throw new RangeError('neighbourOptions: near + far must be at least 1');
  if (o.rotateEvery < 1) throw new RangeError('neighbourOptions: rotateEvery must be at least 1');
  if (!Number.isFinite(o.rotateMinMs) || o.rotateMinMs < 0) throw new RangeError(`neighbourOptions: rotateMinMs must be a finite number >= 0, got ${o.rotateMinMs}`);
  if (!Number.isFinite(o.nearMargin) || o.nearMargin < 0 || o.nearMargin >= 1) throw new RangeError(`neighbourOptions: nearMargin must be in [0, 1), got ${o.nearMargin}`);
  if (!Number.isFinite(o.nearMarginMs) || o.nearMarginMs < 0) throw new RangeError(`neighbourOptions: nearMarginMs must be a finite number >= 0, got ${o.nearMarginMs}`);
  return o;
}

/** A crawler the node could measure: its id and, when known, its coordinate. */
export interface Candidate {
  id: string;
  coord?: Coordinate;
}

export interface NeighbourChange {
  added: string[];
  removed: string[];
}

export class NeighbourSet {
  readonly opts: NeighbourOptions;
  private near: string[] = [];
  private far: string[] = [];
  private picks = 0;
  private turn = 0;
  private rotatedAt = -Infinity;

  constructor(opts: Partial<NeighbourOptions>, private readonly rng: Rng) {
    this.opts = neighbourOptions(opts);
  }

  /** Every member, near first. */
  members(): string[] {
    return [...this.near, ...this.far];
  }

  has(id: string): boolean {
    return this.near.includes(id) || this.far.includes(id);
  }

  get size(): number {
    return this.near.length + this.far.length;
  }

  /** Brings the set up to date with the live candidates. `me` is this node's
   * coordinate when it is settled enough to tell near from far (until then
   * the near part takes nobody new and free slots are filled at random).
   * Members no longer among the candidates (left, failed, turned out not to
   * be crawlers) drop out; the near part otherwise changes only as the
   * header says (sticky, one clear improvement per update). */
  update(candidates: Candidate[], me: Coordinate | undefined): NeighbourChange {
    const before = new Set(this.members());
    const live = new Map(candidates.map((c) => [c.id, c]));
    const cap = this.opts.near + this.opts.far;
    if (me !== undefined && this.opts.near > 0) this.near = this.nearer(candidates, me);
    else this.near = this.near.filter((id) => live.has(id));
    const nearSet = new Set(this.near);
    this.far = this.far.filter((id) => live.has(id) && !nearSet.has(id));
    const room = Math.min(cap - this.near.length, candidates.length - this.near.length);
    if (this.far.length < room) {
      const outside = candidates.map((c) => c.id).filter((id) => !nearSet.has(id) && !this.far.includes(id));
      while (this.far.length < room && outside.length > 0) this.far.push(takeRandom(outside, this.rng));
    }
    if (this.far.length > room) this.far.length = Math.max(0, room);
    const after = new Set(this.members());
    return { added: [...after].filter((id) => !before.has(id)), removed: [...before].filter((id) => !after.has(id)) };
  }

  /** The near part after one update: members still live with a coordinate
   * stay, free slots take the nearest outsiders, and the farthest member
   * gives way to the nearest outsider only when that one is clearly nearer. */
  private nearer(candidates: Candidate[], me: Coordinate): string[] {
    const byD = (a: { id: string; d: number }, b: { id: string; d: number }) => a.d - b.d || (a.id < b.id ? -1 : 1);
    const scored = candidates.filter((c) => c.coord !== undefined).map((c) => ({ id: c.id, d: predictRtt(me, c.coord!) }));
    const member = new Set(this.near);
    const kept = scored.filter((x) => member.has(x.id)).sort(byD);
    const outside = scored.filter((x) => !member.has(x.id)).sort(byD);
    let next = 0;
    while (kept.length < this.opts.near && next < outside.length) kept.push(outside[next++]!);
    const best = outside[next];
    const worst = kept[kept.length - 1];
    if (best !== undefined && worst !== undefined && kept.length >= this.opts.near && worst.d - best.d > Math.max(this.opts.nearMarginMs, this.opts.nearMargin * worst.d)) {
      kept[kept.length - 1] = best;
    }
    return kept.sort(byD).map((x) => x.id);
  }

  /** Swaps one far member for a random candidate outside the set, every
   * `rotateEvery` picks and, when `nowMs` is given, no sooner than
   * `rotateMinMs` after the last swap (call before `pick`). */
  rotate(candidates: Candidate[], nowMs?: number): NeighbourChange {
    if (this.picks < this.opts.rotateEvery || this.far.length === 0) return { added: [], removed: [] };
    if (nowMs !== undefined && nowMs - this.rotatedAt < this.opts.rotateMinMs) return { added: [], removed: [] };
    this.picks = 0;
    if (nowMs !== undefined) this.rotatedAt = nowMs;
    const outside = candidates.map((c) => c.id).filter((id) => !this.has(id));
    if (outside.length === 0) return { added: [], removed: [] };
    const i = Math.floor(this.rng.next() * this.far.length);
    const removed = this.far[i]!;
    const added = takeRandom(outside, this.rng);
    this.far[i] = added;
    return { added: [added], removed: [removed] };
  }

  /** Drops a member at once (it failed to answer or said goodbye). */
  remove(id: string): boolean {
    const n = this.size;
    this.near = this.near.filter((x) => x !== id);
    this.far = this.far.filter((x) => x !== id);
    return this.size < n;
  }

  /** Up to `k` distinct members to probe now, alternating between the near and
   * the far part so both stay measured. */
  pick(k: number): string[] {
    const out: string[] = [];
    const parts = [this.near, this.far].filter((p) => p.length > 0);
    if (parts.length === 0) return out;
    for (let guard = 0; out.length < Math.min(k, this.size) && guard < 8 * k; guard++) {
      const part = parts[this.turn++ % parts.length]!;
      const id = part[Math.floor(this.rng.next() * part.length)]!;
      if (!out.includes(id)) out.push(id);
    }
    this.picks += out.length;
    return out;
  }
}

function takeRandom(xs: string[], rng: Rng): string {
  const i = Math.floor(rng.next() * xs.length);
  const [x] = xs.splice(i, 1);
  return x!;
}
