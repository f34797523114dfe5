// A full crawler's forwarding decision: the crawlers it knows (its nearest
// and some at random, spatial.ts knownPeers), scanned from the anchor (the
// host, or the crawler itself) with a triangle-inequality bound that skips
// peers surely beyond the placement policy's cut, then ranked by the policy
// (placement.ts forwardInto). It stands apart from routing.ts because it owns
// its own data (the known lists, laid out for an in-order scan) and its own
// hot loop; the router only walks the targets it returns.
import { predictRttAt } from '../src/coords/index.js';
import { CandidateSet, forwardInto, lastHopLimit, type PlacementOptions } from '../src/dht/placement.js';
import { createRng } from '../src/rng.js';
import type { CandidateFilter } from './candidate-filter.js';
import type { CrawlerView } from './crawler-view.js';
import type { FlatCoords } from './flat-coords.js';
import { keepLeast, knownPeers } from './spatial.js';

/** Slack on a triangle-inequality lower bound, ms (floating-point rounding). */
const BOUND_SLACK = 1e-6;

/** The distance between the vector parts (no heights) of point i of p and point j of q. */
function vectorDistance(p: FlatCoords, i: number, q: FlatCoords, j: number): number {
  const d = p.dims;
  let s = 0;
  for (let x = 0; x < d; x++) {
    const e = p.vec[i * d + x]! - q.vec[j * d + x]!;
    s += e * e;
  }
  return Math.sqrt(s);
}

/** predictRttAt from the point at x[xi ..] (height hx) to point p of `cv`/`ch` (a known-peer slot),
 * written out for the usual two dimensions (the same sums in the same order, so
 * the same value to the last bit). */
function anchorRtt(x: Float64Array, xi: number, hx: number, cv: Float64Array, p: number, ch: Float64Array, d: number): number {
  if (d !== 2) return predictRttAt(x, xi, hx, cv, p * d, ch[p]!, d);
  const e0 = x[xi]! - cv[p * 2]!;
  const e1 = x[xi + 1]! - cv[p * 2 + 1]!;
  return Math.sqrt(e0 * e0 + e1 * e1) + hx + ch[p]!;
}

export interface KnownPeerOptions {
  /** The crawlers each crawler knows: its nearest and some at random (spatial.ts knownPeers). */
  knownPeers: number;
  knownRandom: number;
  peerSeed: number;
}

export class Forwarding {
  /** Crawlers each crawler knows: known[c·K .. c·K + K). */
  private readonly known: Int32Array;
  /** The vector distance (no heights) from each crawler to each it knows plus
   * that one's height, beside known: with the anchor's distance to the crawler
   * and height, a lower bound on the anchor's predicted RTT to it. */
  private readonly knownBound: Float64Array;
  /** Each known peer's coordinate and height, beside known (the forwarding scan
   * reads them in order instead of from the crawler arrays at random). */
  private readonly knownVec: Float64Array;
  private readonly knownHeight: Float64Array;
  private readonly K: number;
  /** One candidate set and order per forwarding depth (a forward recurses). */
  readonly sets: CandidateSet<number>[];
  readonly orders: Int32Array[];
  /** Scratch for a forwarding decision: the known peers considered and their RTTs. */
  private readonly knownIds: Int32Array;
  private readonly knownRtt: Float64Array;
  /** Scratch: where in c's known list the first forwardFanout online peers are. */
  private readonly firstKnown: Int32Array;
  /** Scratch: the forwardFanout nearest RTTs written out. */
  private readonly kNearestRtt: Float64Array;
  private readonly nearestKth = { nearest: Infinity, kth: Infinity };

  constructor(
    private readonly policy: PlacementOptions,
    /** Coordinate routing (a hash-routed order carries no host coordinate: forwards are measured from the forwarder). */
    private readonly coord: boolean,
    private readonly hosts: FlatCoords,
    private readonly crawlerPts: FlatCoords,
    private readonly crawlers: CrawlerView,
    private readonly filter: CandidateFilter,
    opts: KnownPeerOptions,
  ) {
    const C = crawlerPts.height.length;
    const near = Math.min(opts.knownPeers, Math.max(0, C - 1));
    const random = Math.min(opts.knownRandom, Math.max(0, C - 1 - near));
    this.K = near + random;
    this.known = knownPeers(this.crawlerPts, near, random, createRng(opts.peerSeed));
    this.knownBound = new Float64Array(this.known.length);
    const dims = this.crawlerPts.dims;
    this.knownVec = new Float64Array(this.known.length * dims);
    this.knownHeight = new Float64Array(this.known.length);
    for (let i = 0; i < this.known.length; i++) {
      const p = this.known[i]!;
      if (p < 0) continue;
      for (let x = 0; x < dims; x++) this.knownVec[i * dims + x] = this.crawlerPts.vec[p * dims + x]!;
      this.knownHeight[i] = this.crawlerPts.height[p]!;
    }
    for (let c = 0; c < C; c++) {
      for (let j = 0; j < this.K; j++) {
        const p = this.known[c * this.K + j]!;
        if (p >= 0) this.knownBound[c * this.K + j] = vectorDistance(this.crawlerPts, c, this.crawlerPts, p) + this.crawlerPts.height[p]!;
      }
    }
    this.knownIds = new Int32Array(this.K);
    this.knownRtt = new Float64Array(this.K);
    this.firstKnown = new Int32Array(this.policy.forwardFanout);
    this.kNearestRtt = new Float64Array(Math.max(this.policy.maxAttempts, this.policy.forwardFanout));
    this.sets = Array.from({ length: this.policy.maxHops + 1 }, () => new CandidateSet<number>());
    this.orders = Array.from({ length: this.policy.maxHops + 1 }, () => new Int32Array(this.policy.forwardFanout));
  }

  /**
   * The placement policy's forwarding decision of full crawler c for a task
   * of host h that reached it from `from` after `hops` forwards: the crawlers
   * it knows (online, not `from`) ranked into orders[hops] over
   * sets[hops]; returns how many targets (≤ 0: refuse).
   */
  targets(h: number, c: number, from: number, hops: number, t: number): number {
    const set = this.sets[hops]!;
    set.clear();
    // Measured from the host (the order carries its coordinate) or from c itself.
    const fromHost = this.coord && this.policy.forwardAnchor === 'host';
    const a = fromHost ? this.hosts : this.crawlerPts;
    const ai = fromHost ? h : c;
    const d = a.dims;
    const av = a.vec;
    const ah = a.height[ai]!;
    // The known peers' coordinates, at the known list's index (the same values as the crawlers').
    const cv = this.knownVec;
    const ch = this.knownHeight;
    const online = this.crawlers.online;
    const known = this.known;
    const kb = this.knownBound;
    const ids = this.knownIds;
    const rtt = this.knownRtt;
    const base = c * this.K;
    const k = this.policy.forwardFanout;
    const roomOnly = hops + 1 >= this.policy.maxHops;
    // The outward rule orders full peers by where they lie against c: no k-nearest cut applies.
    const outward = !roomOnly && fromHost && this.policy.outward;
    const toC = fromHost ? vectorDistance(a, ai, this.crawlerPts, c) : 0;
    // The triangle inequality: RTT(anchor, p) ≥ ‖c − p‖ − ‖anchor − c‖ + both heights (less a slack for rounding).
    const off = ah - toC - BOUND_SLACK;
    // The nearest and the k-th nearest RTT written out, for addRelevant (kept as they are written).
    const top = this.kNearestRtt;
    let tops = 0;
    let nearest = Infinity;
    let n = 0;
    let j = 0;
    let cut = Infinity;
    if (!roomOnly) {
      // A bound that addRelevant's cut can only tighten: the spill bound and the
      // k-th nearest among the first k online peers c knows (its nearest, listed
      // first). A peer whose RTT from the anchor is surely beyond it would be
      // passed over there, so its RTT is not computed (the triangle inequality
      // bounds it by the distances c–peer, known in advance, and anchor–c).
      const fj = this.firstKnown;
      let lo = Infinity;
      let hi = -Infinity;
      for (; j < this.K && n < k; j++) {
        const p = known[base + j]!;
        if (p < 0 || p === from || !online[p]) continue;
        const r = anchorRtt(av, ai * d, ah, cv, base + j, ch, d);
        fj[n] = j;
        ids[n] = p;
        rtt[n++] = r;
        if (r < lo) lo = r;
        if (r > hi) hi = r;
      }
      if (n === k && !outward) cut = Math.max(this.policy.spill * lo, hi);
      // The same filter as for the peers after them (they pass it unless rounding says otherwise).
      let m = 0;
      for (let i = 0; i < n; i++) {
        const p = ids[i]!;
        if (kb[base + fj[i]!]! + off > cut) continue;
        ids[m] = p;
        rtt[m++] = rtt[i]!;
      }
      n = m;
      for (let i = 0; i < n; i++) {
        const r = rtt[i]!;
        if (r < nearest) nearest = r;
        tops = keepLeast(top, tops, k, r);
      }
    }
    // addRelevant's own cut as it stands (once k are written): max(spill ×
    // the nearest, the k-th nearest). Both only fall as peers are added, so a
    // peer beyond it now is passed over there and moves neither: it is not
    // written out, and one whose bound lies beyond it is not computed.
    const spill = this.policy.spill;
    // At the last hop a target with room lies within lastHopBound × c's own RTT to the host (placement.ts lastHopLimit).
    const selfRtt = (roomOnly && fromHost && this.policy.lastHopBound < Infinity) || outward ? predictRttAt(av, ai * d, ah, this.crawlerPts.vec, c * d, this.crawlerPts.height[c]!, d) : Infinity;
    let tight = roomOnly ? lastHopLimit(selfRtt, this.policy) : tops === k && !outward ? Math.max(spill * nearest, top[k - 1]!) : Infinity;
    for (; j < this.K; j++) {
      // The bound first: it reads known-peer data in order, while online[p]
      // is a scattered read (the order of two filters changes nothing; an
      // empty slot's bound is 0 and falls to the p < 0 test).
      if (kb[base + j]! + off > (cut < tight ? cut : tight)) continue;
      const p = known[base + j]!;
      if (p < 0 || p === from || !online[p]) continue;
      const r = anchorRtt(av, ai * d, ah, cv, base + j, ch, d);
      if (r > tight) continue;
      ids[n] = p;
      rtt[n++] = r;
      if (!roomOnly) {
        if (r < nearest) nearest = r;
        tops = keepLeast(top, tops, k, r);
        if (tops === k && !outward) tight = Math.max(spill * nearest, top[k - 1]!);
      }
    }
    this.nearestKth.nearest = nearest;
    this.nearestKth.kth = roomOnly ? -Infinity : tops === k && !outward ? top[k - 1]! : Infinity;
    this.filter.add(set, ids, rtt, n, k, roomOnly, t, this.nearestKth);
    return forwardInto(set, this.policy, this.orders[hops]!, hops, selfRtt);
  }

  /** Where full crawler c forwards a task of host h that it got from `from`
   * after `hops` forwards (empty: it refuses), and the crawlers it knows. */
  choice(h: number, c: number, from: number, hops: number, t: number): { targets: number[]; known: number[] } {
    const k = this.targets(h, c, from, hops, t);
    const set = this.sets[hops]!;
    const known = Array.from(this.known.subarray(c * this.K, (c + 1) * this.K)).filter((p) => p >= 0);
    return { targets: Array.from(this.orders[hops]!.subarray(0, Math.max(0, k)), (i) => set.ids[i]!), known };
  }
}
