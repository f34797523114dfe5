// How the simulator routes a task: as the live manager and crawlers would.
//
// Coordinate routing: the modelled overlay (overlay.ts) yields the crawlers the
// Router's DHT search (src/dht/cell-search.ts) would offer for the host; the placement policy
// (src/dht/placement.ts, the code the live Router and TaskReceiver run) ranks
// them; the task goes to the first `maxAttempts` in that order until one takes
// it. A crawler without room forwards it under the same policy to the crawlers
// it knows (its nearest ones), within the hop limit. Hash routing: the first
// online crawlers clockwise of the host's hash, in ring order (the live
// Router's XOR order), forwarded the same way but measured from the
// forwarder (a hash-routed order carries no host coordinate).
//
// Routing quality is sampled: for about `stretchSamples` routed tasks the
// RTT of the crawler that took the task is compared with the best online
// crawler's (origin-index.ts: the online crawlers by origin, bounded per
// origin, with the full scan's answer), beside the oracle (the online
// crawler with the least predicted RTT: perfect routing on the coordinates)
// and hash routing's first choice.
import { predictRttAt, quantileSorted } from '../src/coords/index.js';
import { CandidateSet, candidateScore, forwardInto, lastHopLimit, mayForward, placementOptions, rankInto, wantsWider, type PlacementOptions } from '../src/dht/placement.js';
import { Overlay, type OverlayOptions } from './overlay.js';
import { createRng } from '../src/rng.js';
import { HashRing, keepLeast, knownPeers, kthSmallest } from './spatial.js';
import type { FlatCoords } from './flat-coords.js';
import type { World } from './world.js';
import { crawlerCoords, hostCoords, hostCrawlerRtt, predictedHostCrawler } from './world.js';
import { OriginIndex } from './origin-index.js';
import { imbalanceYardsticks, OnlineMinutes } from './imbalance.js';

export type Routing = 'coord' | 'hash';

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

/** What routing needs of the crawlers' state (the engine owns it). */
export interface CrawlerView {
  readonly online: Uint8Array;
  readonly running: Uint8Array;
  readonly qLen: Uint8Array;
  readonly threads: number;
  readonly queue: number;
  /** Drops expired tasks from c's queue (so its load is current). */
  purge(c: number, t: number): void;
  /** Puts task s on crawler c if it has room; false when it is full. */
  accept(s: number, c: number, t: number): boolean;
}

/** Routing figures of a run (the `routing` object of `sim run --json`, and more). */
export interface RoutingStats {
  policy: string;
  /** Chosen crawler's RTT to the host ÷ the best online crawler's (sampled tasks). */
  stretchMedian: number;
  stretchP90: number;
  /** The same for the oracle (least predicted RTT among online crawlers). */
  oracleStretchMedian: number;
  oracleStretchP90: number;
  /** The same for hash routing's first choice. */
  hashStretchMedian: number;
  hashStretchP90: number;
  stretchSamples: number;
  /** Chosen crawler's RTT ÷ the oracle's choice's (the policy's own cost, coordinate error aside). */
  overOracleMedian: number;
  overOracleP90: number;
  /** Mean RTT (ms) over the sampled tasks: chosen, oracle, best online, hash routing's. */
  sampledRttMs: { chosen: number; oracle: number; best: number; hash: number };
  /** Routed tasks: submissions and migrations. */
  routed: number;
  /** Tasks the search found no crawler for. */
  noCrawler: number;
  /** Tasks every attempt (and its forwards) refused. */
  refused: number;
  /** Crawlers the manager sent a task to, per routed task. */
  attemptsPerTask: number;
  /** Forwarding hops per placed task (0 when the first crawler took it), and per forwarded task. */
  forwardHopsMean: number;
  forwardHopsPerForwarded: number;
  /** Task-protocol messages (sends and forwards) per routed task. */
  sendsPerTask: number;
  /** Overlay costs: DHT lookups (paid, and answered from the Router's cache) and provides. */
  lookups: number;
  cacheHits: number;
  provides: number;
  /** Crawlers' counts of their finest announced cell (adaptive announcing, announce.ts): a lookup each. */
  densityCounts: number;
  /** (lookups + provides) and their modelled Kademlia messages, per routed task and per crawler-hour online. */
  dhtOpsPerTask: number;
  dhtMessagesPerTask: number;
  dhtOpsPerCrawlerHour: number;
  dhtMessagesPerCrawlerHour: number;
  lookupsPerTask: number;
  providesPerCrawlerHour: number;
  /** Records found of crawlers that had left. */
  staleRecords: number;
  /** Provider records the search offered as candidates per routed task (departed crawlers' too). */
  candidatesPerTask: number;
  /** With placement widen on: routes whose search was widened one level coarser
   * (no room within the spill bound), and those that found room there, per routed task. */
  widenedPerTask?: number;
  widenedToRoomPerTask?: number;
  /** Why sampled routes missed the oracle's crawler (coordinate routing only). */
  diagnosis?: RoutingDiagnosis;
  /** Yardsticks beside the load imbalance (sim/imbalance.ts), when stats() is given the pages per crawler. */
  loadImbalanceIdeal?: number;
  loadImbalancePerCapacity?: number;
}

class Samples {
  private a = new Float64Array(1024);
  n = 0;
  push(x: number): void {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = x;
  }
  sorted(): Float64Array {
    return this.a.slice(0, this.n).sort();
  }
  /** The samples in the order they came. */
  values(): Float64Array {
    return this.a.subarray(0, this.n);
  }
}

/** Why a sampled route did not go to the oracle's crawler (coordinate routing):
 * its cell lay outside the searched blocks; it did not announce the cell
 * searched (adaptive announcing: its own cell too sparse to go that fine,
 * or its finer record dropped); the cached answer of its cell was fetched
 * before its record; the answer was cut to the manager's own first
 * LOCAL_PROVIDER_CAP; the per-cell sample left it out; it was a candidate
 * with room but ranked below a less loaded one (the load term: a trade made
 * on purpose); it was a candidate without room (the task went to one with
 * room or was forwarded); anything else. */
export const MISS_CLASSES = ['outside', 'unannounced', 'staleAnswer', 'cut', 'sampledOut', 'load', 'full', 'other'] as const;
export type MissClass = (typeof MISS_CLASSES)[number];

/** The routing diagnosis: per class, the sampled routes and the stretch p90
 * had those routes gone to the oracle's crawler (the others unchanged). */
export interface RoutingDiagnosis {
  sampled: number;
  /** Routes that went to the oracle's crawler itself. */
  oracleTaken: number;
  classes: Record<MissClass, { count: number; p90IfOracle: number }>;
  /** The stretch p90 had the 'load' and 'full' routes gone to the oracle's
   * crawler: what the policy's trade of RTT for load (which the oracle,
   * ignoring load and queues, does not make) costs at p90. */
  p90IfOracleLoadTrade: number;
  /** The stretch p90 had each 'full' route gone to the crawler with room of
   * least predicted RTT instead (the oracle's yardstick with queues heeded):
   * near the run's own p90, the policy does what capacity allows. */
  p90IfRoomOracle: number;
  /** The 'full' routes by the forwarding hops that placed them (index 0: the
   * manager's own choice), each with the chosen crawler's RTT ÷ the nearest
   * crawler with room's (median, p90): where the policy loses to that yardstick. */
  fullByHop: { count: number; overRoomOracleMedian: number; overRoomOracleP90: number }[];
  /** The same counterfactuals on predicted RTT, each route's chosen crawler's
   * ÷ the oracle's (what the policy decides on): the p90 as run, had the
   * 'full' routes gone to the oracle's crawler, and had they gone to the
   * nearest crawler with room. The last is never below the one before (the
   * nearest with room is a crawler the oracle could choose, so its predicted
   * RTT is never below the oracle's): the exact form of the check that the
   * true-RTT p90s above only meet within coordinate error. */
  predicted: { overOracleP90: number; p90IfFullToOracle: number; p90IfFullToRoomOracle: number };
}

export interface SimRouterOptions {
  placement?: Partial<PlacementOptions>;
  overlay?: Partial<OverlayOptions>;
  /** The crawlers each crawler knows: its nearest and some at random (spatial.ts knownPeers). */
  knownPeers: number;
  knownRandom: number;
  peerSeed: number;
  /** About this many routed tasks are sampled for stretch, out of about expectedRoutes. */
  stretchSamples: number;
  expectedRoutes: number;
}

export class SimRouter {
  readonly policy: PlacementOptions;
  readonly overlay: Overlay;
  private readonly coord: boolean;
  private readonly ring: HashRing;
  private readonly hosts: FlatCoords;
  private readonly crawlerPts: FlatCoords;
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
  // scratch
  private readonly found: Int32Array;
  private readonly foundRtt: Float64Array;
  private readonly set = new CandidateSet<number>();
  private readonly order: Int32Array;
  /** One candidate set and order per forwarding depth (a forward recurses). */
  private readonly fsets: CandidateSet<number>[];
  private readonly forders: Int32Array[];
  private readonly refusedBy: Int32Array;
  private walk = 0;
  /** Forwarding hops of the last task placed (the diagnosis' fullByHop). */
  private lastHops = 0;
  private candidateSum = 0;
  private readonly kNearestRtt: Float64Array;
  private readonly topScores: Float64Array;
  /** Scratch for a forwarding decision: the known peers considered and their RTTs. */
  private readonly knownIds: Int32Array;
  private readonly knownRtt: Float64Array;
  /** What the search may leave out: crawlers beyond the spill bound and the maxAttempts nearest. */
  private readonly keep: { spill: number; k: number };

  private readonly first = new Int32Array(1);
  private readonly nearestKth = { nearest: Infinity, kth: Infinity };
  /** Scratch: where in c's known list the first forwardFanout online peers are. */
  private readonly firstKnown: Int32Array;
  /** The online crawlers by origin (the stretch sample's scan). */
  private readonly byOrigin: OriginIndex;
  private readonly sampleEvery: number;
  // counters
  private routed = 0;
  private noCrawler = 0;
  private refused = 0;
  /** Routes whose search was widened (placement widen), and those it gave a crawler with room. */
  private widened = 0;
  private widenedToRoom = 0;
  private attempts = 0;
  private sends = 0;
  private placed = 0;
  private forwarded = 0;
  private hopSum = 0;
  private readonly stretch = new Samples();
  private readonly oracle = new Samples();
  private readonly hash = new Samples();
  private readonly overOracle = new Samples();
  /** Each stretch sample's MISS_CLASSES index (−1: the oracle's crawler took it). */
  private missClass = new Int8Array(1024);
  /** Each sample's stretch had it gone to the crawler with room of least predicted RTT (NaN unless 'full'). */
  private readonly roomOracle = new Samples();
  /** Each sample's predicted RTT ÷ the oracle's: as chosen, and had it gone to the nearest crawler with room (NaN unless 'full'). */
  private readonly predOverOracle = new Samples();
  private readonly predRoomOverOracle = new Samples();
  /** Per 'full' sample: the hops that placed it, and its RTT ÷ the nearest crawler with room's. */
  private readonly fullHops = new Samples();
  private readonly fullOverRoom = new Samples();
  private readonly rttSums = { chosen: 0, oracle: 0, best: 0, hash: 0 };
  /** Each crawler's online minutes (the load imbalance's yardsticks). */
  private readonly onlineMinutes: OnlineMinutes;

  constructor(
    private readonly world: World,
    private readonly routing: Routing,
    private readonly crawlers: CrawlerView,
    seedRing: number,
    opts: SimRouterOptions,
  ) {
    this.policy = placementOptions(opts.placement);
    const C = world.config.crawlers;
    this.hosts = hostCoords(world);
    this.crawlerPts = crawlerCoords(world);
    this.coord = routing === 'coord';
    this.overlay = new Overlay(this.hosts, this.crawlerPts, opts.overlay);
    this.ring = new HashRing(C, world.config.hosts, seedRing);
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
    this.found = new Int32Array(this.overlay.maxFound);
    this.foundRtt = new Float64Array(this.overlay.maxFound);
    this.order = new Int32Array(this.policy.maxAttempts);
    this.kNearestRtt = new Float64Array(Math.max(this.policy.maxAttempts, this.policy.forwardFanout));
    this.topScores = new Float64Array(Math.max(this.policy.maxAttempts, this.policy.forwardFanout));
    this.knownIds = new Int32Array(this.K);
    this.knownRtt = new Float64Array(this.K);
    this.firstKnown = new Int32Array(this.policy.forwardFanout);
    this.keep = { spill: this.policy.spill, k: this.policy.maxAttempts };

    this.fsets = Array.from({ length: this.policy.maxHops + 1 }, () => new CandidateSet<number>());
    this.forders = Array.from({ length: this.policy.maxHops + 1 }, () => new Int32Array(this.policy.forwardFanout));
    this.refusedBy = new Int32Array(C);
    this.byOrigin = new OriginIndex(world);
    this.sampleEvery = Math.max(1, Math.floor(opts.expectedRoutes / Math.max(1, opts.stretchSamples)));
    this.onlineMinutes = new OnlineMinutes(C);
  }

  join(c: number, t: number): void {
    this.ring.add(c);
    this.overlay.join(c, t);
    this.byOrigin.add(c);
    this.onlineMinutes.join(c, t);
  }

  leave(c: number, t: number): void {
    this.ring.remove(c);
    this.overlay.leave(c, t);
    this.byOrigin.remove(c);
    this.onlineMinutes.leave(c, t);
  }

  close(t: number): void {
    this.overlay.close(t);
    this.onlineMinutes.close(t);
  }

  /**
   * Adds to `set`, with their loads, those of the crawlers ids[0 .. n) (RTTs
   * in rtt) that can be among the first k of the placement order: one of the
   * k nearest (the order after the crawlers with room within the spill
   * bound), or one with room within that bound that scores better than the
   * k-th best such so far (a score is never below the RTT); a full crawler
   * beyond the k-th nearest is left out (the k nearest rank before it). With
   * roomOnly (the last forwarding hop) only crawlers with room, by score. Reading
   * the loads of just these changes no ranking. (The others' expired queued
   * tasks are then purged later, when the crawler is next touched, which can
   * shift later decisions a little: quick rec ICR 80 283 tasks, 81 071 when
   * every candidate was purged.)
   */
  private addRelevant(set: CandidateSet<number>, ids: Int32Array, rtt: Float64Array, n: number, k: number, roomOnly: boolean, t: number, known?: { nearest: number; kth: number }): void {
    let nearest = Infinity;
    let kthNearest: number;
    if (known !== undefined) {
      // The search kept both as it wrote the candidates out (the same values).
      nearest = known.nearest;
      kthNearest = known.kth;
    } else {
      for (let i = 0; i < n; i++) if (rtt[i]! < nearest) nearest = rtt[i]!;
      kthNearest = roomOnly ? -Infinity : kthSmallest(rtt, n, k, this.kNearestRtt);
    }
    const spill = roomOnly ? Infinity : this.policy.spill * nearest;
    const queueSpill = roomOnly ? Infinity : Math.min(this.policy.spill, this.policy.queueSpill) * nearest;
    const top = this.topScores;
    let tops = 0;
    const cr = this.crawlers;
    const running = cr.running;
    const qLen = cr.qLen;
    const threads = cr.threads;
    const queue = cr.queue;
    for (let i = 0; i < n; i++) {
      const r = rtt[i]!;
      if (r > kthNearest && (r > spill || (tops === k && r >= top[k - 1]!))) continue;
      const c = ids[i]!;
      if (qLen[c] === queue) cr.purge(c, t);
      // A full crawler beyond the k-th nearest never ranks among the first k:
      // the k nearest (each with room within the bound, or nearer) come first.
      if (running[c] === threads && qLen[c] === queue && (roomOnly || r > kthNearest)) continue;
      set.add(c, r, running[c]!, qLen[c]!, threads - running[c]! + (queue - qLen[c]!));
      const j = set.n - 1;
      if (r > spill || !set.room[j] || (set.queued[j] === 1 && r > queueSpill)) continue;
      // The k best scores of the crawlers with room within the spill bound (queueSpill for one with tasks queued), ascending.
      tops = keepLeast(top, tops, k, candidateScore(set, j, this.policy));
    }
  }

  /** Ranks the candidates the full search finds into `order`; returns how many.
   * With `again`, the search route() just made for the same host and time is
   * not redone, only billed again (Overlay.repeatSearch); the loads are read anew. */
  private searchCandidates(h: number, t: number, again = false): number {
    const set = this.set;
    set.clear();
    const found = this.found;
    const rtt = this.foundRtt;
    const ov = this.overlay;
    let n = again ? ov.repeatSearch(h, t) : -1;
    if (n < 0) n = ov.search(h, t, found, rtt, this.keep);
    this.candidateSum += ov.lastFound;
    this.nearestKth.nearest = ov.lastNearest;
    this.nearestKth.kth = ov.lastKth;
    this.addRelevant(set, found, rtt, n, this.policy.maxAttempts, false, t, this.nearestKth);
    const m = rankInto(set, this.policy, this.order, this.policy.maxAttempts);
    // No room within the spill bound: one level coarser (placement.ts wantsWider;
    // a repeat reuses the candidates as they were widened).
    if (again || !wantsWider(set, this.order, m, this.policy)) return m;
    const before = ov.lastFound;
    const w = ov.widen(h, t, found, rtt, this.keep);
    if (w < 0) return m;
    this.widened++;
    this.candidateSum += Math.max(0, ov.lastFound - before);
    set.clear();
    this.nearestKth.nearest = ov.lastNearest;
    this.nearestKth.kth = ov.lastKth;
    this.addRelevant(set, found, rtt, w, this.policy.maxAttempts, false, t, this.nearestKth);
    const wm = rankInto(set, this.policy, this.order, this.policy.maxAttempts);
    if (wm > 0 && set.room[this.order[0]!] === 1) this.widenedToRoom++;
    return wm;
  }

  /** The crawlers a task for host h is sent to at t, in order (the manager's
   * choice before any forwarding). */
  choose(h: number, t: number): number[] {
    if (!this.coord) return Array.from(this.order.subarray(0, this.ring.nearest(h, this.policy.maxAttempts, this.order)));
    const m = this.searchCandidates(h, t);
    return Array.from(this.order.subarray(0, m), (i) => this.set.ids[i]!);
  }

  /** The first crawler choose(h, t) would name (−1: none), right after route()
   * refused a task of host h at t: the search is not redone (the same
   * candidates, the same bill), the ranking is, on the loads as they are now. */
  firstChoiceAgain(h: number, t: number): number {
    if (!this.coord) return this.ring.nearest(h, 1, this.first) === 1 ? this.first[0]! : -1;
    const m = this.searchCandidates(h, t, true);
    return m > 0 ? this.set.ids[this.order[0]!]! : -1;
  }

  /** Routes task s (for host h) at time t; returns the crawler that took it, or −1. */
  route(s: number, h: number, t: number): number {
    this.routed++;
    this.walk = (this.walk + 1) | 0;
    let m: number;
    if (this.coord) {
      m = this.searchCandidates(h, t);
    } else {
      // Hash routing: the ring order, as the live Router tries XOR-closest crawlers.
      this.overlay.hashLookup(h, t);
      m = this.ring.nearest(h, this.policy.maxAttempts, this.order);
    }
    if (m === 0) {
      this.noCrawler++;
      return -1;
    }
    let by = -1;
    for (let i = 0; i < m && by < 0; i++) {
      const c = this.coord ? this.set.ids[this.order[i]!]! : this.order[i]!;
      this.attempts++;
      by = this.deliver(s, h, c, -1, 0, t);
    }
    if (by < 0) this.refused++;
    else if (this.routed % this.sampleEvery === 0) this.sample(h, by);
    return by;
  }

  /** Task s arrives at crawler c from `from` after `hops` forwards: c takes it,
   * or forwards it by the policy; returns the crawler that took it, or −1. */
  private deliver(s: number, h: number, c: number, from: number, hops: number, t: number): number {
    this.sends++;
    if (this.crawlers.accept(s, c, t)) {
      this.placed++;
      this.lastHops = hops;
      if (hops > 0) {
        this.forwarded++;
        this.hopSum += hops;
      }
      return c;
    }
    // A crawler that already refused this task refuses it again (its queue is
    // still full): the live one would walk the same neighbours again.
    if (!mayForward(hops, this.policy) || this.refusedBy[c] === this.walk) return -1;
    this.refusedBy[c] = this.walk;
    const k = this.forwardTargets(h, c, from, hops, t);
    const set = this.fsets[hops]!;
    const order = this.forders[hops]!;
    for (let j = 0; j < k; j++) {
      const by = this.deliver(s, h, set.ids[order[j]!]!, c, hops + 1, t);
      if (by >= 0) return by;
    }
    return -1;
  }

  /**
   * The placement policy's forwarding decision of full crawler c for a task
   * of host h that reached it from `from` after `hops` forwards: the crawlers
   * it knows (online, not `from`) ranked into forders[hops] over
   * fsets[hops]; returns how many targets (≤ 0: refuse).
   */
  private forwardTargets(h: number, c: number, from: number, hops: number, t: number): number {
    const set = this.fsets[hops]!;
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
    this.addRelevant(set, ids, rtt, n, k, roomOnly, t, this.nearestKth);
    return forwardInto(set, this.policy, this.forders[hops]!, hops, selfRtt);
  }

  /** Where full crawler c forwards a task of host h that it got from `from`
   * after `hops` forwards (empty: it refuses), and the crawlers it knows. */
  forwardChoice(h: number, c: number, from: number, hops: number, t: number): { targets: number[]; known: number[] } {
    const k = this.forwardTargets(h, c, from, hops, t);
    const set = this.fsets[hops]!;
    const known = Array.from(this.known.subarray(c * this.K, (c + 1) * this.K)).filter((p) => p >= 0);
    return { targets: Array.from(this.forders[hops]!.subarray(0, Math.max(0, k)), (i) => set.ids[i]!), known };
  }

  /** Stretch of the crawler that took a task for host h, beside the oracle's and hash routing's. */
  private sample(h: number, by: number): void {
    // The same answer as a scan of every online crawler (origin-index.ts).
    const { best, oracle } = this.byOrigin.scan(h);
    if (!(best > 0) || oracle < 0 || this.ring.nearest(h, 1, this.first) !== 1) return;
    const chosen = hostCrawlerRtt(this.world, h, by);
    const ora = hostCrawlerRtt(this.world, h, oracle);
    const hash = hostCrawlerRtt(this.world, h, this.first[0]!);
    const i = this.stretch.n;
    if (i === this.missClass.length) {
      const b = new Int8Array(2 * i);
      b.set(this.missClass);
      this.missClass = b;
    }
    this.missClass[i] = by === oracle || !this.coord ? -1 : MISS_CLASSES.indexOf(this.missOf(oracle));
    const isFull = this.missClass[i] === MISS_CLASSES.indexOf('full');
    const roomC = isFull ? this.nearestWithRoom(h, by) : -1;
    const room = isFull ? hostCrawlerRtt(this.world, h, roomC) : NaN;
    this.roomOracle.push(room / best);
    if (this.coord) {
      const po = predictedHostCrawler(this.world, h, oracle);
      this.predOverOracle.push(predictedHostCrawler(this.world, h, by) / po);
      this.predRoomOverOracle.push(isFull ? predictedHostCrawler(this.world, h, roomC) / po : NaN);
    }
    if (!Number.isNaN(room)) {
      this.fullHops.push(this.lastHops);
      this.fullOverRoom.push(chosen / room);
    }
    this.stretch.push(chosen / best);
    this.oracle.push(ora / best);
    this.hash.push(hash / best);
    this.overOracle.push(chosen / ora);
    const r = this.rttSums;
    r.chosen += chosen;
    r.oracle += ora;
    r.best += best;
    r.hash += hash;
  }

  /** Why the route just made (its search and ranking still in `set`/`order`)
   * did not go to oracle crawler o. */
  private missOf(o: number): MissClass {
    const where = this.overlay.whereIs(o);
    if (where === 'sampled-out') return 'sampledOut';
    if (where !== 'found') return where;
    const set = this.set;
    let i = 0;
    while (i < set.n && set.ids[i] !== o) i++;
    if (i === set.n) return 'other';
    if (!set.room[i]) return 'full';
    return this.order[0] !== i ? 'load' : 'other';
  }

  /** The online crawler with room of least predicted RTT to host h (a full scan;
   * `by` just took the task, so counts as having had room). The scan compares
   * squared vector distances against the best so far less both heights, and
   * computes an RTT only for a crawler that can beat it (the same answer). */
  private nearestWithRoom(h: number, by: number): number {
    const cr = this.crawlers;
    const w = this.world;
    const d = w.dims;
    const hv = w.hostVec;
    const cv = w.crawlerVec;
    const ch = w.crawlerHeight;
    const hh = w.hostHeight[h]!;
    let best = by;
    let bestRtt = predictedHostCrawler(w, h, by);
    for (let c = 0; c < cr.online.length; c++) {
      if (!cr.online[c] || (cr.running[c] === cr.threads && cr.qLen[c] === cr.queue)) continue;
      // Slack 1e-6 ms: only a crawler surely beyond the best is skipped (rounding).
      const room = bestRtt - hh - ch[c]! + 1e-6;
      if (room < 0) continue;
      let s = 0;
      for (let a = 0; a < d; a++) {
        const e = hv[h * d + a]! - cv[c * d + a]!;
        s += e * e;
      }
      if (s > room * room) continue;
      const r = predictedHostCrawler(w, h, c);
      if (r < bestRtt) {
        bestRtt = r;
        best = c;
      }
    }
    return best;
  }

  /** The diagnosis of the sampled routes (undefined for hash routing). */
  private diagnosis(): RoutingDiagnosis | undefined {
    if (!this.coord) return undefined;
    const st = this.stretch.values();
    const or = this.oracle.values();
    const n = st.length;
    const miss = this.missClass;
    // The stretch p90 had the routes of the given classes gone to the oracle's crawler.
    const p90If = (hit: (k: number) => boolean): number => {
      if (n === 0) return 0;
      const alt = new Float64Array(n);
      for (let i = 0; i < n; i++) alt[i] = miss[i]! >= 0 && hit(miss[i]!) ? or[i]! : st[i]!;
      return quantileSorted(alt.sort(), 0.9);
    };
    const classes = {} as RoutingDiagnosis['classes'];
    MISS_CLASSES.forEach((name, k) => {
      let count = 0;
      for (let i = 0; i < n; i++) if (miss[i] === k) count++;
      classes[name] = { count, p90IfOracle: p90If((x) => x === k) };
    });
    let oracleTaken = 0;
    for (let i = 0; i < n; i++) if (miss[i] === -1) oracleTaken++;
    const load = MISS_CLASSES.indexOf('load');
    const full = MISS_CLASSES.indexOf('full');
    const room = this.roomOracle.values();
    const alt = new Float64Array(n);
    for (let i = 0; i < n; i++) alt[i] = miss[i] === full ? room[i]! : st[i]!;
    const p90IfRoomOracle = n > 0 ? quantileSorted(alt.sort(), 0.9) : 0;
    return { sampled: n, oracleTaken, classes, p90IfOracleLoadTrade: p90If((x) => x === load || x === full), p90IfRoomOracle, fullByHop: this.fullByHop(), predicted: this.predictedP90s() };
  }

  /** RoutingDiagnosis.predicted: the p90s of predicted RTT ÷ the oracle's. */
  private predictedP90s(): RoutingDiagnosis['predicted'] {
    const pst = this.predOverOracle.values();
    const proom = this.predRoomOverOracle.values();
    const miss = this.missClass;
    const full = MISS_CLASSES.indexOf('full');
    const n = pst.length;
    const p90 = (alt: (i: number) => number): number => (n > 0 ? quantileSorted(Float64Array.from({ length: n }, (_, i) => alt(i)).sort(), 0.9) : 0);
    return {
      overOracleP90: p90((i) => pst[i]!),
      // The oracle's own crawler is 1 by definition.
      p90IfFullToOracle: p90((i) => (miss[i] === full ? 1 : pst[i]!)),
      p90IfFullToRoomOracle: p90((i) => (miss[i] === full ? proom[i]! : pst[i]!)),
    };
  }

  private fullByHop(): RoutingDiagnosis['fullByHop'] {
    const hops = this.fullHops.values();
    const over = this.fullOverRoom.values();
    return Array.from({ length: this.policy.maxHops + 1 }, (_, k) => {
      const mine = Float64Array.from(over.filter((_, i) => hops[i] === k)).sort();
      const q = (p: number) => (mine.length > 0 ? quantileSorted(mine, p) : 0);
      return { count: mine.length, overRoomOracleMedian: q(0.5), overRoomOracleP90: q(0.9) };
    });
  }

  /** The run's routing figures; with `pages` (pages fetched per crawler over
   * a run of runMinutes), the load imbalance's yardsticks too. */
  stats(pages?: ArrayLike<number>, runMinutes = 0): RoutingStats {
    const s = this.stretch.sorted();
    const o = this.oracle.sorted();
    const hs = this.hash.sorted();
    const oo = this.overOracle.sorted();
    const sm = (x: number) => (s.length > 0 ? x / s.length : 0);
    const q = (a: Float64Array, p: number) => (a.length > 0 ? quantileSorted(a, p) : 0);
    const ov = this.overlay;
    const lookups = ov.lookups;
    const provides = ov.provides;
    // Crawlers' density counts (adaptive announcing) are lookups too.
    const ops = lookups + provides + ov.densityCounts;
    const msgs = ov.lookupMessages + ov.provideMessages + ov.densityMessages;
    const hours = ov.onlineMinutes / 60;
    const per = (x: number) => (this.routed > 0 ? x / this.routed : 0);
    const perHour = (x: number) => (hours > 0 ? x / hours : 0);
    const p = this.policy;
    return {
      policy:
        this.routing === 'coord'
          ? `coord: placement loadWeight ${p.loadWeight}, ${p.maxAttempts} attempts, forward ≤ ${p.maxHops} hops × ${p.forwardFanout} (${p.forwardAnchor} anchor)`
          : `hash: ring order, ${p.maxAttempts} attempts, forward ≤ ${p.maxHops} hops × ${p.forwardFanout}`,
      stretchMedian: q(s, 0.5),
      stretchP90: q(s, 0.9),
      oracleStretchMedian: q(o, 0.5),
      oracleStretchP90: q(o, 0.9),
      hashStretchMedian: q(hs, 0.5),
      hashStretchP90: q(hs, 0.9),
      stretchSamples: s.length,
      overOracleMedian: q(oo, 0.5),
      overOracleP90: q(oo, 0.9),
      sampledRttMs: { chosen: sm(this.rttSums.chosen), oracle: sm(this.rttSums.oracle), best: sm(this.rttSums.best), hash: sm(this.rttSums.hash) },
      routed: this.routed,
      noCrawler: this.noCrawler,
      refused: this.refused,
      attemptsPerTask: per(this.attempts),
      forwardHopsMean: this.placed > 0 ? this.hopSum / this.placed : 0,
      forwardHopsPerForwarded: this.forwarded > 0 ? this.hopSum / this.forwarded : 0,
      sendsPerTask: per(this.sends),
      lookups,
      cacheHits: ov.cacheHits,
      provides,
      densityCounts: ov.densityCounts,
      dhtOpsPerTask: per(ops),
      dhtMessagesPerTask: per(msgs),
      dhtOpsPerCrawlerHour: perHour(ops),
      dhtMessagesPerCrawlerHour: perHour(msgs),
      lookupsPerTask: per(lookups),
      providesPerCrawlerHour: perHour(provides),
      staleRecords: ov.staleRecords,
      candidatesPerTask: this.coord ? per(this.candidateSum) : 0,
      ...(this.policy.widen ? { widenedPerTask: per(this.widened), widenedToRoomPerTask: per(this.widenedToRoom) } : {}),
      diagnosis: this.diagnosis(),
      ...(pages !== undefined ? this.imbalanceYardsticks(pages, runMinutes) : {}),
    };
  }

  private imbalanceYardsticks(pages: ArrayLike<number>, runMinutes: number): Pick<RoutingStats, 'loadImbalanceIdeal' | 'loadImbalancePerCapacity'> {
    const w = this.world;
    let bytes = 0;
    let n = 0;
    for (let h = 0; h < w.pages.length; h++) {
      bytes += w.bytes[h]!;
      n += w.pages[h]!;
    }
    const y = imbalanceYardsticks(pages, this.onlineMinutes.minutes, runMinutes, { bandwidthKbps: w.bandwidthKbps, threads: w.config.threads, waitMs: w.config.waitMs, meanPageBytes: n > 0 ? bytes / n : 0 });
    return { loadImbalanceIdeal: y.ideal, loadImbalancePerCapacity: y.perCapacity };
  }

  /** Forwarded tasks and their hops (the engine's `forwards` and `meanForwardHops`). */
  get forwards(): { count: number; hops: number } {
    return { count: this.forwarded, hops: this.hopSum };
  }
}
