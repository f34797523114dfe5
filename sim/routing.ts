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
//
// The jobs live beside this file: candidate-filter.ts (which candidates get
// their loads read), forwarding.ts (a full crawler's forward over the peers it
// knows), route-samples.ts (the stretch samples and the miss diagnosis),
// routing-stats.ts (the result block's types). This file is the route itself
// (search, rank, attempts, the forwarding walk, the counters) and the one
// import path for the engine and the tests.
import { CandidateSet, mayForward, mayTryNext, placementOptions, rankInto, wantsWider, type PlacementOptions } from '../src/dht/placement.js';
import { Overlay, type OverlayOptions } from './overlay.js';
import { HashRing } from './spatial.js';
import type { FlatCoords } from './flat-coords.js';
import type { World } from './world.js';
import { crawlerCoords, hostCoords } from './world.js';
import { OriginIndex } from './origin-index.js';
import { imbalanceYardsticks, OnlineMinutes } from './imbalance.js';
import { CandidateFilter } from './candidate-filter.js';
import type { CrawlerView } from './crawler-view.js';
import { Forwarding, type KnownPeerOptions } from './forwarding.js';
import { RouteSamples } from './route-samples.js';
import { MISS_CLASSES, type MissClass, type RoutingStats } from './routing-stats.js';

export type { CrawlerView } from './crawler-view.js';
export { MISS_CLASSES, type MissClass, type RoutingDiagnosis, type RoutingStats } from './routing-stats.js';

export type Routing = 'coord' | 'hash';

export interface SimRouterOptions extends KnownPeerOptions {
  placement?: Partial<PlacementOptions>;
  overlay?: Partial<OverlayOptions>;
  /** About this many routed tasks are sampled for stretch, out of about expectedRoutes. */
  stretchSamples: number;
  expectedRoutes: number;
}

export class SimRouter {
  readonly policy: PlacementOptions;
  readonly overlay: Overlay;
  private readonly coord: boolean;
  private readonly ring: HashRing;
  // scratch
  private readonly found: Int32Array;
  private readonly foundRtt: Float64Array;
  private readonly set = new CandidateSet<number>();
  private readonly order: Int32Array;
  private readonly filter: CandidateFilter;
  private readonly forwarding: Forwarding;
  private readonly refusedBy: Int32Array;
  private walk = 0;
  /** Whether the last attempt's crawler forwarded the task (its 'full' answer came from a walk). */
  private walked = false;
  /** Routes whose attempts ended at a full walk with candidates left (placement fullWalkEnds). */
  private endedByWalk = 0;
  /** Forwarding hops of the last task placed (the diagnosis' fullByHop). */
  private lastHops = 0;
  private candidateSum = 0;
  /** What the search may leave out: crawlers beyond the spill bound and the maxAttempts nearest. */
  private readonly keep: { spill: number; k: number };

  private readonly first = new Int32Array(1);
  private readonly nearestKth = { nearest: Infinity, kth: Infinity };
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
  private readonly samples: RouteSamples;
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
    const hosts: FlatCoords = hostCoords(world);
    const crawlerPts: FlatCoords = crawlerCoords(world);
    this.coord = routing === 'coord';
    this.overlay = new Overlay(hosts, crawlerPts, opts.overlay);
    this.ring = new HashRing(C, world.config.hosts, seedRing);
    this.filter = new CandidateFilter(this.policy, crawlers);
    this.forwarding = new Forwarding(this.policy, this.coord, hosts, crawlerPts, crawlers, this.filter, opts);
    this.found = new Int32Array(this.overlay.maxFound);
    this.foundRtt = new Float64Array(this.overlay.maxFound);
    this.order = new Int32Array(this.policy.maxAttempts);
    this.keep = { spill: this.policy.spill, k: this.policy.maxAttempts };
    this.refusedBy = new Int32Array(C);
    this.byOrigin = new OriginIndex(world);
    this.sampleEvery = Math.max(1, Math.floor(opts.expectedRoutes / Math.max(1, opts.stretchSamples)));
    this.samples = new RouteSamples(world, crawlers, this.coord, this.policy.maxHops);
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
    this.filter.add(set, found, rtt, n, this.policy.maxAttempts, false, t, this.nearestKth);
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
    this.filter.add(set, found, rtt, w, this.policy.maxAttempts, false, t, this.nearestKth);
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
      // The walk guard: a next candidate whose load (as the search read it) has room is tried anyway.
      if (i > 0 && !mayTryNext(this.walked, this.coord, this.coord && this.set.room[this.order[i]!] === 1, this.policy)) {
        this.endedByWalk++;
        break;
      }
      const c = this.coord ? this.set.ids[this.order[i]!]! : this.order[i]!;
      this.attempts++;
      this.walked = false;
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
    const k = this.forwarding.targets(h, c, from, hops, t);
    if (hops === 0) this.walked = k > 0;
    const set = this.forwarding.sets[hops]!;
    const order = this.forwarding.orders[hops]!;
    for (let j = 0; j < k; j++) {
      const by = this.deliver(s, h, set.ids[order[j]!]!, c, hops + 1, t);
      if (by >= 0) return by;
    }
    return -1;
  }

  /** Where full crawler c forwards a task of host h that it got from `from`
   * after `hops` forwards (empty: it refuses), and the crawlers it knows. */
  forwardChoice(h: number, c: number, from: number, hops: number, t: number): { targets: number[]; known: number[] } {
    return this.forwarding.choice(h, c, from, hops, t);
  }

  /** Stretch of the crawler that took a task for host h, beside the oracle's and hash routing's. */
  private sample(h: number, by: number): void {
    // The same answer as a scan of every online crawler (origin-index.ts).
    const { best, oracle } = this.byOrigin.scan(h);
    if (!(best > 0) || oracle < 0 || this.ring.nearest(h, 1, this.first) !== 1) return;
    const miss = by === oracle || !this.coord ? -1 : MISS_CLASSES.indexOf(this.missOf(oracle));
    this.samples.add(h, by, best, oracle, this.first[0]!, miss, this.lastHops);
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

  /** The run's routing figures; with `pages` (pages fetched per crawler over
   * a run of runMinutes), the load imbalance's yardsticks too. */
  stats(pages?: ArrayLike<number>, runMinutes = 0): RoutingStats {
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
      ...this.samples.figures(),
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
      ...(this.policy.fullWalkEnds ? { endedByWalkPerTask: per(this.endedByWalk) } : {}),
      ...(this.policy.widen ? { widenedPerTask: per(this.widened), widenedToRoomPerTask: per(this.widenedToRoom) } : {}),
      diagnosis: this.samples.diagnosis(),
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
