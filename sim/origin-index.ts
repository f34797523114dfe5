// The online crawlers grouped by their origin, for the stretch sample's scan:
// the best online crawler for a host (least true RTT) and the oracle (least
// predicted RTT, ties to the lower id) without reading every online crawler.
//
// Every crawler replicates one of the world's crawler origins (world.ts): it
// lies within a radius of the origin's coordinate, and its true RTT to a host
// is the origin pair's factor × its predicted RTT, or the pair's measured RTT
// itself (hostCrawlerRttFrom). So a bound computed from the origin alone
// holds for all its crawlers, and an origin whose bounds are beyond both the
// best and the oracle found so far cannot change either. The answer is the
// full scan's to the last bit: a minimum, and the least (predicted RTT, id)
// pair, do not depend on the order the crawlers are read in, and the bounds
// carry a slack far above floating-point rounding.
import type { World } from './world.js';
import { hostCrawlerRttFrom, predictedHostCrawler } from './world.js';

/** Slack on the lower bounds, ms (rounding of a sum of a few terms of at most a few thousand ms is ~1e-12). */
const SLACK = 1e-6;

export interface BestOnline {
  /** Least true RTT to the host over the online crawlers (Infinity: none online). */
  best: number;
  /** The online crawler with the least predicted RTT (ties: lower id; −1: none), and that RTT. */
  oracle: number;
  oracleRtt: number;
}

export class OriginIndex {
  /** Crawler origins (crawler c belongs to c mod O). */
  private readonly O: number;
  private readonly cap: number;
  /** Online crawlers of origin j: members[j·cap .. j·cap + count[j]). */
  private readonly members: Int32Array;
  private readonly count: Int32Array;
  private readonly posOf: Int32Array;
  /** Origin j's coordinate (vector part), the farthest of its crawlers from it, and their least height. */
  private readonly center: Float64Array;
  private readonly radius: Float64Array;
  private readonly minHeight: Float64Array;
  private readonly lbPred: Float64Array;
  private readonly lbRtt: Float64Array;
  private readonly out: BestOnline = { best: Infinity, oracle: -1, oracleRtt: Infinity };

  constructor(private readonly world: World) {
    const C = world.config.crawlers;
    const O = world.crawlerOrigins.length;
    const d = world.dims;
    this.O = O;
    this.cap = Math.ceil(C / O);
    this.members = new Int32Array(O * this.cap);
    this.count = new Int32Array(O);
    this.posOf = new Int32Array(C).fill(-1);
    this.center = new Float64Array(O * d);
    this.radius = new Float64Array(O);
    this.minHeight = new Float64Array(O).fill(Infinity);
    for (let j = 0; j < O; j++) this.center.set(world.base[world.crawlerOrigins[j]!]!.vec.subarray(0, d), j * d);
    for (let c = 0; c < C; c++) {
      const j = c % O;
      let s = 0;
      for (let a = 0; a < d; a++) {
        const e = world.crawlerVec[c * d + a]! - this.center[j * d + a]!;
        s += e * e;
      }
      this.radius[j] = Math.max(this.radius[j]!, Math.sqrt(s));
      this.minHeight[j] = Math.min(this.minHeight[j]!, world.crawlerHeight[c]!);
    }
    this.lbPred = new Float64Array(O);
    this.lbRtt = new Float64Array(O);
  }

  add(c: number): void {
    if (this.posOf[c]! >= 0) return;
    const j = c % this.O;
    const p = this.count[j]!++;
    this.members[j * this.cap + p] = c;
    this.posOf[c] = p;
  }

  remove(c: number): void {
    const p = this.posOf[c]!;
    if (p < 0) return;
    const j = c % this.O;
    const last = this.members[j * this.cap + --this.count[j]!]!;
    this.members[j * this.cap + p] = last;
    this.posOf[last] = p;
    this.posOf[c] = -1;
  }

  /** The best online crawler for host h and the oracle (the object is reused). */
  scan(h: number): BestOnline {
    const w = this.world;
    const d = w.dims;
    const O = this.O;
    const hh = w.hostHeight[h]!;
    const scaleRow = (h % w.hostOrigins.length) * O;
    const measuredRow = w.hostOrigin[h]! * w.latency.n;
    let jPred = -1;
    let jRtt = -1;
    for (let j = 0; j < O; j++) {
      if (this.count[j] === 0) continue;
      let s = 0;
      for (let a = 0; a < d; a++) {
        const e = w.hostVec[h * d + a]! - this.center[j * d + a]!;
        s += e * e;
      }
      const lb = Math.max(0, Math.sqrt(s) - this.radius[j]!) + hh + this.minHeight[j]! - SLACK;
      this.lbPred[j] = lb;
      // hostCrawlerRttFrom: factor × predicted, else the measured RTT, else predicted.
      const k = w.originScale[scaleRow + j]!;
      const measured = w.latency.rtt[measuredRow + w.crawlerOrigins[j]!]!;
      this.lbRtt[j] = k > 0 ? k * lb : measured > 0 ? measured : lb;
      if (jPred < 0 || lb < this.lbPred[jPred]!) jPred = j;
      if (jRtt < 0 || this.lbRtt[j]! < this.lbRtt[jRtt]!) jRtt = j;
    }
    const out = this.out;
    out.best = Infinity;
    out.oracle = -1;
    out.oracleRtt = Infinity;
    if (jPred < 0) return out;
    this.visit(h, jPred);
    if (jRtt !== jPred) this.visit(h, jRtt);
    for (let j = 0; j < O; j++) {
      if (j === jPred || j === jRtt || this.count[j] === 0) continue;
      // No crawler of j can be nearer by prediction (strictly) nor better by RTT.
      if (this.lbPred[j]! > out.oracleRtt && this.lbRtt[j]! >= out.best) continue;
      this.visit(h, j);
    }
    return out;
  }

  private visit(h: number, j: number): void {
    const w = this.world;
    const out = this.out;
    const base = j * this.cap;
    for (let i = base; i < base + this.count[j]!; i++) {
      const c = this.members[i]!;
      const p = predictedHostCrawler(w, h, c);
      const r = hostCrawlerRttFrom(w, h, c, p);
      if (r < out.best) out.best = r;
      if (p < out.oracleRtt || (p === out.oracleRtt && c < out.oracle)) {
        out.oracleRtt = p;
        out.oracle = c;
      }
    }
  }
}
