// The routing-quality samples and the diagnosis drawn from them: for a
// sampled route, the RTT of the crawler that took the task against the best
// online crawler's, the oracle's (least predicted RTT) and hash routing's
// first choice, the class of miss when it was not the oracle's crawler, and
// the counterfactuals of the 'full' misses (the nearest crawler with room).
// It stands apart from routing.ts because it runs on about stretchSamples
// routes, never in the routing path itself, and owns the result's stretch
// figures and diagnosis.
import { quantileSorted } from '../src/coords/index.js';
import type { CrawlerView } from './crawler-view.js';
import { MISS_CLASSES, type RoutingDiagnosis, type RoutingStats } from './routing-stats.js';
import type { World } from './world.js';
import { hostCrawlerRtt, predictedHostCrawler } from './world.js';

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

/** The stretch figures of RoutingStats (in its order). */
export type StretchFigures = Pick<
  RoutingStats,
  'stretchMedian' | 'stretchP90' | 'oracleStretchMedian' | 'oracleStretchP90' | 'hashStretchMedian' | 'hashStretchP90' | 'stretchSamples' | 'overOracleMedian' | 'overOracleP90' | 'sampledRttMs'
>;

export class RouteSamples {
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

  constructor(
    private readonly world: World,
    private readonly crawlers: CrawlerView,
    /** Coordinate routing (hash routing gets no diagnosis and no predicted ratios). */
    private readonly coord: boolean,
    /** The policy's hop limit (fullByHop has one entry per hop count, 0 .. maxHops). */
    private readonly maxHops: number,
  ) {}

  /** A sampled route of host h taken by crawler `by` after `hops` forwards,
   * against the best online crawler's RTT `best`, oracle crawler `oracle` and
   * hash routing's first choice `hashFirst`; `miss` is its MISS_CLASSES index
   * (−1: the oracle's crawler took it, or hash routing). */
  add(h: number, by: number, best: number, oracle: number, hashFirst: number, miss: number, hops: number): void {
    const chosen = hostCrawlerRtt(this.world, h, by);
    const ora = hostCrawlerRtt(this.world, h, oracle);
    const hash = hostCrawlerRtt(this.world, h, hashFirst);
    const i = this.stretch.n;
    if (i === this.missClass.length) {
      const b = new Int8Array(2 * i);
      b.set(this.missClass);
      this.missClass = b;
    }
    this.missClass[i] = miss;
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
      this.fullHops.push(hops);
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

  /** The stretch figures of the samples. */
  figures(): StretchFigures {
    const s = this.stretch.sorted();
    const o = this.oracle.sorted();
    const hs = this.hash.sorted();
    const oo = this.overOracle.sorted();
    const sm = (x: number) => (s.length > 0 ? x / s.length : 0);
    const q = (a: Float64Array, p: number) => (a.length > 0 ? quantileSorted(a, p) : 0);
    return {
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
    };
  }

  /** The diagnosis of the sampled routes (undefined for hash routing). */
  diagnosis(): RoutingDiagnosis | undefined {
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
    return Array.from({ length: this.maxHops + 1 }, (_, k) => {
      const mine = Float64Array.from(over.filter((_, i) => hops[i] === k)).sort();
      const q = (p: number) => (mine.length > 0 ? quantileSorted(mine, p) : 0);
      return { count: mine.length, overRoomOracleMedian: q(0.5), overRoomOracleP90: q(0.9) };
    });
  }
}
