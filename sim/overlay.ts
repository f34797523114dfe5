// The DHT overlay the live crawlers build, modelled for the simulator.
//
// Live (src/dht): a crawler provides the keys of the coordinate-space cells it
// sits in, one per level (announce.ts, cells.ts); kad-dht re-provides them
// while it lives and every holder drops a record once its validity has passed
// (providerTiming). The manager's Router looks up the providers of the 2^d
// block of cells around a host's coordinate, finest level first, keeps at most
// 20 providers per cell, drops those that do not answer, and widens until
// `want` crawlers lie within 1.5 cell sides of the host, plus one level more;
// a lookup result is reused for a few seconds.
//
// Here: the same cells (cellIndex/blockIndices of cells.ts, numbered instead
// of hashed), provider records that appear when a crawler joins and lapse one
// validity (plus, on average, half a cleanup interval) after its last
// re-provide when it leaves, the same widening search and per-cell cap, the
// same lookup cache — and a count of what the live system pays for it: DHT
// lookups and provides, each a Kademlia query of ⌈log₂ n⌉ rounds of α
// messages (a provide adds k ADD_PROVIDER messages).
//
// The provider order within a cell: kad-dht answers from a datastore keyed by
// peer id, so the first 20 providers of a crowded cell are the same 20 for
// every lookup; the model draws one fixed pseudo-random order per cell.
import { DEFAULT_PROVIDER_TTL_MS, providerTiming } from '../src/dht/announce.js';
import { predictRttAt } from '../src/coords/index.js';
import { blockIndices, cellIndex, cellSide, DEFAULT_CELLS, levels, type CellOptions } from '../src/dht/cells.js';
import { hash32, keepLeast } from './spatial.js';
import type { FlatCoords } from './flat-coords.js';
import { mergeOptions } from '../src/options.js';

export interface OverlayOptions {
  cells: CellOptions;
  /** Provider record lifetime, ms (live default: announce.ts). */
  providerTtlMs: number;
  /** The Router's `want`: stop widening once this many crawlers lie within `reach` cell sides (then one level more). */
  want: number;
  /** ... of the host, in cell sides of the level reached. */
  reach: number;
  /** Providers the Router keeps per cell lookup. */
  providersPerCell: number;
  /** How long the manager's Router reuses a cell lookup, ms (network.ts: 2 s). */
  cacheTtlMs: number;
  /** The Router starts the lookups of every level at once (as Router.lookup()
   * does today) rather than one level at a time: the ops of levels the
   * widening never reaches are paid too. */
  eagerLevels: boolean;
  /** Kademlia's α (queries in flight per round) and k (bucket size: a provide
   * stores the record on the k closest nodes). kad-dht defaults. */
  kadAlpha: number;
  kadK: number;
}

export const DEFAULT_OVERLAY_OPTIONS: Readonly<OverlayOptions> = Object.freeze({
  cells: DEFAULT_CELLS,
  providerTtlMs: DEFAULT_PROVIDER_TTL_MS,
  want: 4,
  reach: 1.5,
  providersPerCell: 20,
  cacheTtlMs: 2_000,
  eagerLevels: true,
  kadAlpha: 3,
  kadK: 20,
});

export function overlayOptions(partial: Partial<OverlayOptions> = {}): OverlayOptions {
  const o = mergeOptions('overlayOptions', DEFAULT_OVERLAY_OPTIONS, partial);
  const bad = (m: string): never => {
    throw new RangeError(`overlayOptions: ${m}`);
  };
  if (!(o.providerTtlMs > 0)) bad(`providerTtlMs must be > 0, got ${o.providerTtlMs}`);
  if (!(Number.isInteger(o.want) && o.want >= 1)) bad(`want must be an integer >= 1, got ${o.want}`);
  if (!(o.reach > 0)) bad(`reach must be > 0, got ${o.reach}`);
  if (!(Number.isInteger(o.providersPerCell) && o.providersPerCell >= 1)) bad(`providersPerCell must be an integer >= 1, got ${o.providersPerCell}`);
  if (!(o.cacheTtlMs >= 0)) bad(`cacheTtlMs must be >= 0, got ${o.cacheTtlMs}`);
  if (!(Number.isInteger(o.kadAlpha) && o.kadAlpha >= 1 && Number.isInteger(o.kadK) && o.kadK >= 1)) bad('kadAlpha and kadK must be integers >= 1');
  return o;
}

/** Messages of one Kademlia lookup among n nodes: ⌈log₂ n⌉ rounds of α queries. */
export function kadLookupMessages(n: number, alpha: number): number {
  return alpha * Math.ceil(Math.log2(Math.max(2, n)));
}

const MS_PER_MINUTE = 60_000;

/** The provider-record schedule of providerTiming, in simulated minutes. */
export function recordSchedule(ttlMs: number): { reprovideEvery: number; visibleAfterLastProvide: number } {
  const t = providerTiming(ttlMs);
  // kad-dht checks its own records every checkMs and re-provides those within
  // thresholdMs of expiry: with the check timer started at the first provide,
  // a record is re-provided at the first check past validity − threshold.
  const checksPerPeriod = Math.floor((t.validityMs - t.thresholdMs) / t.checkMs) + 1;
  const reprovideEvery = (checksPerPeriod * t.checkMs) / MS_PER_MINUTE;
  // A holder deletes an expired record at its next cleanup (uniform phase: half a cleanup interval on average).
  const visibleAfterLastProvide = (t.validityMs + t.cleanupMs / 2) / MS_PER_MINUTE;
  return { reprovideEvery, visibleAfterLastProvide };
}

export class Overlay {
  readonly o: OverlayOptions;
  /** Levels in use, finest first. */
  readonly levels: number[];
  /** The Router's reach at each level: reach × the cell side, ms. */
  private readonly reachAt: Float64Array;
  private readonly L: number;
  /** Cells per search block (2^d). */
  private readonly B: number;
  private readonly C: number;
  private readonly dims: number;
  /** Providers of each cell in lookup order: members[start[cell] .. start[cell + 1]). */
  private readonly start: Int32Array;
  private readonly members: Int32Array;
  /** Cell of crawler c at level index li: crawlerCell[c·L + li]; its record's index in members: pos[c·L + li]. */
  private readonly crawlerCell: Int32Array;
  private readonly pos: Int32Array;
  /** The search block of each host: blocks[(h·L + li)·B + j], −1 = none. */
  private readonly blocks: Int32Array;
  /** Cell names (for tests and reports): `level/i0,i1,...`. */
  readonly cellKeys: string[];
  /**
   * What a lookup of each cell returns: its first providersPerCell records
   * still valid, packed (crawler ids, coordinates, heights) for the search.
   * A window holds until a crawler joins before its end (winDirty) or a
   * departed member's record lapses (winUntil).
   */
  private readonly cap: number;
  private readonly winIds: Int32Array;
  private readonly winVec: Float64Array;
  private readonly winHeight: Float64Array;
  private readonly winCount: Int32Array;
  /** Bounding box of each window's members (dims per cell) and their least height. */
  private readonly winLo: Float64Array;
  private readonly winHi: Float64Array;
  private readonly winMinHeight: Float64Array;
  private readonly winEnd: Int32Array;
  private readonly winUntil: Float64Array;
  private readonly winDirty: Uint8Array;
  private readonly cellLast: Float64Array;
  private readonly hostLast: Float64Array;
  private readonly online: Uint8Array;
  private readonly joinedAt: Float64Array;
  /** A crawler's records are found until this time (Infinity while online). */
  readonly recordUntil: Float64Array;
  private readonly seen: Int32Array;
  private stamp = 0;
  private readonly hosts: FlatCoords;
  private readonly crawlers: FlatCoords;
  private readonly nearFrom: Int32Array;
  private kth = new Float64Array(64);
  private readonly reprovideEvery: number;
  private readonly visibleFor: number;
  private readonly cacheMinutes: number;
  onlineCount = 0;
  /** kadLookupMessages at lookupCostFor crawlers online (−1: not yet computed). */
  private lookupCost = 0;
  private lookupCostFor = -1;
  // ---- what the live system would pay
  lookups = 0;
  lookupMessages = 0;
  provides = 0;
  provideMessages = 0;
  /** Lookups answered from the Router's cache (not paid). */
  cacheHits = 0;
  /** Records found of crawlers that had already left (the Router asks them for their info; they do not answer). */
  staleRecords = 0;
  /** Online crawlers the last search found (those it wrote out, and those beyond `keep` it dropped). */
  lastFound = 0;
  /** With `keep`: the least RTT the last search wrote out, and the keep.k-th least (Infinity when fewer). */
  lastNearest = Infinity;
  lastKth = Infinity;
  /** The last search (for repeatSearch); host −1 once a join or leave changed the overlay. */
  private readonly last = { host: -1, t: NaN, stale: 0, paid: 0, n: 0 };
  /** Σ over crawlers of time online, minutes (closed at leave and at close()). */
  onlineMinutes = 0;

  constructor(hosts: FlatCoords, crawlers: FlatCoords, opts: Partial<OverlayOptions> = {}) {
    this.o = overlayOptions(opts);
    const cellOpts = this.o.cells;
    this.levels = levels(cellOpts);
    const L = this.levels.length;
    this.L = L;
    this.reachAt = Float64Array.from(this.levels, (l) => this.o.reach * cellSide(l, cellOpts));
    this.hosts = hosts;
    this.crawlers = crawlers;
    this.dims = crawlers.dims;
    const H = hosts.height.length;
    const C = crawlers.height.length;
    this.C = C;
    const B = 1 << Math.max(1, Math.min(crawlers.dims, cellOpts.maxDims));
    this.B = B;
    const vecOf = (p: FlatCoords, i: number) => ({ vec: p.vec.subarray(i * p.dims, (i + 1) * p.dims) });
    const ids = new Map<string, number>();
    this.cellKeys = [];
    const levelOf: number[] = [];
    const idOf = (li: number, index: number[]): number => {
      const key = `${this.levels[li]}/${index.join(',')}`;
      let id = ids.get(key);
      if (id === undefined) {
        id = this.cellKeys.length;
        ids.set(key, id);
        this.cellKeys.push(key);
        levelOf.push(li);
      }
      return id;
    };
    // Announced cells, one per level per crawler; search blocks per host and level.
    this.crawlerCell = new Int32Array(C * L);
    for (let c = 0; c < C; c++) {
      const at = vecOf(crawlers, c);
      for (let li = 0; li < L; li++) this.crawlerCell[c * L + li] = idOf(li, cellIndex(at, this.levels[li]!, cellOpts));
    }
    this.blocks = new Int32Array(H * L * B).fill(-1);
    for (let h = 0; h < H; h++) {
      const at = vecOf(hosts, h);
      for (let li = 0; li < L; li++) {
        const block = blockIndices(at, this.levels[li]!, cellOpts);
        for (let j = 0; j < block.length; j++) this.blocks[(h * L + li) * B + j] = idOf(li, block[j]!);
      }
    }
    const nCells = this.cellKeys.length;
    // Providers per cell (CSR), each cell in its own fixed pseudo-random order.
    const count = new Int32Array(nCells + 1);
    for (let i = 0; i < this.crawlerCell.length; i++) count[this.crawlerCell[i]! + 1]!++;
    for (let i = 0; i < nCells; i++) count[i + 1]! += count[i]!;
    this.start = Int32Array.from(count);
    this.members = new Int32Array(this.crawlerCell.length);
    const fillAt = Int32Array.from(count);
    for (let c = 0; c < C; c++) for (let li = 0; li < L; li++) this.members[fillAt[this.crawlerCell[c * L + li]!]!++] = c;
    this.pos = new Int32Array(C * L);
    for (let cell = 0; cell < nCells; cell++) {
      const a = this.start[cell]!;
      const b = this.start[cell + 1]!;
      if (b - a > 1) {
        const part = Array.from(this.members.subarray(a, b)).sort((x, y) => hash32(x, cell) - hash32(y, cell) || x - y);
        this.members.set(part, a);
      }
      for (let i = a; i < b; i++) this.pos[this.members[i]! * L + levelOf[cell]!] = i;
    }
    this.cap = this.o.providersPerCell;
    this.winIds = new Int32Array(nCells * this.cap);
    this.winVec = new Float64Array(nCells * this.cap * this.dims);
    this.winHeight = new Float64Array(nCells * this.cap);
    this.winCount = new Int32Array(nCells);
    this.winLo = new Float64Array(nCells * this.dims);
    this.winHi = new Float64Array(nCells * this.dims);
    this.winMinHeight = new Float64Array(nCells);
    this.winEnd = Int32Array.from(this.start.subarray(0, nCells));
    this.winUntil = new Float64Array(nCells).fill(Infinity);
    this.winDirty = new Uint8Array(nCells).fill(1);
    this.cellLast = new Float64Array(nCells).fill(-Infinity);
    this.hostLast = new Float64Array(H).fill(-Infinity);
    this.online = new Uint8Array(C);
    this.joinedAt = new Float64Array(C);
    this.recordUntil = new Float64Array(C).fill(-Infinity);
    this.seen = new Int32Array(C);
    this.nearFrom = new Int32Array(L);
    const sched = recordSchedule(this.o.providerTtlMs);
    this.reprovideEvery = sched.reprovideEvery;
    this.visibleFor = sched.visibleAfterLastProvide;
    this.cacheMinutes = this.o.cacheTtlMs / MS_PER_MINUTE;
  }

  /** Cells a crawler announces (one per level). */
  get cellsPerCrawler(): number {
    return this.L;
  }

  /** The most crawlers one search can find. */
  get maxFound(): number {
    return this.L * this.B * this.cap;
  }

  /** Number of distinct cells (announced or searched). */
  get cells(): number {
    return this.cellKeys.length;
  }

  /** The search block of host h at level index li (finest = 0), as cell names. */
  blockOf(h: number, li: number): string[] {
    const out: string[] = [];
    for (let j = 0; j < this.B; j++) {
      const id = this.blocks[(h * this.L + li) * this.B + j]!;
      if (id >= 0) out.push(this.cellKeys[id]!);
    }
    return out;
  }

  private provideCost(n: number): number {
    return kadLookupMessages(n, this.o.kadAlpha) + this.o.kadK;
  }

  /** Crawler c joins at t and provides its cells. */
  join(c: number, t: number): void {
    this.last.host = -1;
    if (this.online[c]) return;
    this.online[c] = 1;
    this.onlineCount++;
    this.joinedAt[c] = t;
    this.recordUntil[c] = Infinity;
    // A new record enters every window it precedes the end of.
    for (let li = 0; li < this.L; li++) {
      const cell = this.crawlerCell[c * this.L + li]!;
      if (this.pos[c * this.L + li]! < this.winEnd[cell]! || this.winEnd[cell] === this.start[cell + 1]) this.winDirty[cell] = 1;
    }
    this.provides += this.L;
    this.provideMessages += this.L * this.provideCost(this.onlineCount);
  }

  /** Re-provides of crawler c since it joined, up to t; returns the time of its last provide. */
  private settle(c: number, t: number): number {
    const since = this.joinedAt[c]!;
    const periods = Math.floor((t - since) / this.reprovideEvery);
    this.provides += this.L * periods;
    this.provideMessages += this.L * periods * this.provideCost(this.onlineCount);
    this.onlineMinutes += t - since;
    return since + periods * this.reprovideEvery;
  }

  /** Crawler c leaves at t. Notified or not, its records stay until they
   * lapse: withdrawing only stops re-providing. */
  leave(c: number, t: number): void {
    this.last.host = -1;
    if (!this.online[c]) return;
    const last = this.settle(c, t);
    this.online[c] = 0;
    this.onlineCount--;
    const until = last + this.visibleFor;
    this.recordUntil[c] = until;
    for (let li = 0; li < this.L; li++) {
      const cell = this.crawlerCell[c * this.L + li]!;
      if (this.pos[c * this.L + li]! < this.winEnd[cell]! && until < this.winUntil[cell]!) this.winUntil[cell] = until;
    }
  }

  /** Closes the books at the end of the run (re-provides and online time of those still online). */
  close(t: number): void {
    for (let c = 0; c < this.C; c++) {
      if (!this.online[c]) continue;
      this.settle(c, t);
      this.joinedAt[c] = t;
    }
  }

  /**
   * The crawlers some cell lookup returns at t (in the first providersPerCell
   * valid records of a cell they announce), online ones only. The others
   * are never offered to the manager's search: tasks reach them only by
   * forwarding. (A reporting aid, not on the hot path.)
   */
  visibleCrawlers(t: number): number {
    const mark = new Uint8Array(this.C);
    let n = 0;
    for (let cell = 0; cell < this.winCount.length; cell++) {
      this.window(cell, t);
      for (let w = cell * this.cap; w < cell * this.cap + this.winCount[cell]!; w++) {
        const c = this.winIds[w]!;
        if (this.online[c] && !mark[c]) {
          mark[c] = 1;
          n++;
        }
      }
    }
    return n;
  }

  /** True while some lookup finds crawler c's records. */
  findable(c: number, t: number): boolean {
    return this.recordUntil[c]! > t;
  }

  /** A DHT lookup of key i among those whose last lookups `last` remembers:
   * answered from the Router's cache within its TTL, else paid. */
  private lookup(last: Float64Array, i: number, t: number): void {
    if (t - last[i]! < this.cacheMinutes) {
      this.cacheHits++;
      return;
    }
    last[i] = t;
    this.lookups++;
    // The cost of a lookup changes only with the online count (a join or a leave).
    if (this.lookupCostFor !== this.onlineCount) {
      this.lookupCostFor = this.onlineCount;
      this.lookupCost = kadLookupMessages(this.onlineCount, this.o.kadAlpha);
    }
    this.lookupMessages += this.lookupCost;
  }

  /** The hash-routing lookup for host h (kad getClosestPeers on the host's key). */
  hashLookup(h: number, t: number): void {
    this.lookup(this.hostLast, h, t);
  }

  /** Brings the window of `cell` up to date at t. */
  private window(cell: number, t: number): void {
    if (!this.winDirty[cell] && t < this.winUntil[cell]!) return;
    const cap = this.cap;
    const d = this.dims;
    const end = this.start[cell + 1]!;
    let got = 0;
    let until = Infinity;
    let i = this.start[cell]!;
    for (; i < end && got < cap; i++) {
      const c = this.members[i]!;
      const r = this.recordUntil[c]!;
      if (!(r > t)) continue;
      const w = cell * cap + got;
      this.winIds[w] = c;
      for (let a = 0; a < d; a++) this.winVec[w * d + a] = this.crawlers.vec[c * d + a]!;
      this.winHeight[w] = this.crawlers.height[c]!;
      got++;
      if (r < until) until = r;
    }
    this.winCount[cell] = got;
    let minH = Infinity;
    for (let a = 0; a < d; a++) {
      let lo = Infinity;
      let hi = -Infinity;
      for (let w = cell * cap; w < cell * cap + got; w++) {
        const x = this.winVec[w * d + a]!;
        if (x < lo) lo = x;
        if (x > hi) hi = x;
      }
      this.winLo[cell * d + a] = lo;
      this.winHi[cell * d + a] = hi;
    }
    for (let w = cell * cap; w < cell * cap + got; w++) minH = Math.min(minH, this.winHeight[w]!);
    this.winMinHeight[cell] = minH;
    this.winEnd[cell] = i;
    this.winUntil[cell] = until;
    this.winDirty[cell] = 0;
  }

  /** A lower bound on the predicted RTT from host h to any member of `cell`'s window. */
  private windowBound(cell: number, h: number): number {
    const d = this.dims;
    let s = 0;
    for (let a = 0; a < d; a++) {
      const x = this.hosts.vec[h * d + a]!;
      const lo = this.winLo[cell * d + a]!;
      const hi = this.winHi[cell * d + a]!;
      const e = x < lo ? lo - x : x > hi ? x - hi : 0;
      s += e * e;
    }
    return Math.sqrt(s) + this.hosts.height[h]! + this.winMinHeight[cell]!;
  }

  /**
   * The Router's widening search for host h at time t: writes the online
   * crawlers it finds into `out` (in the order found) and their predicted
   * RTTs to the host into `rtt`; returns how many. Pays its lookups.
   *
   * With `keep`, the caller ranks only crawlers within keep.spill × the
   * nearest RTT found or among the keep.k nearest (the placement policy puts
   * every other one after them): at the last level read, a window that lies
   * wholly beyond that is not read (its lookup is still paid), and crawlers
   * beyond it are not written out (lastFound still counts them).
   */
  search(h: number, t: number, out: Int32Array, rtt: Float64Array, keep?: { spill: number; k: number }): number {
    const d = this.dims;
    const hv = this.hosts.vec;
    const hi = h * d;
    const hh = this.hosts.height[h]!;
    const two = d === 2;
    const h0 = hv[hi]!;
    const h1 = two ? hv[hi + 1]! : 0;
    const wv = this.winVec;
    const wh = this.winHeight;
    const ids = this.winIds;
    const seen = this.seen;
    const online = this.online;
    const reachAt = this.reachAt;
    let stale = 0;
    const L = this.L;
    const B = this.B;
    const cap = this.cap;
    const base = h * L * B;
    this.stamp = (this.stamp + 1) | 0;
    const stamp = this.stamp;
    const want = this.o.want;
    // nearFrom[l]: crawlers found that lie within reach from level l on.
    const nearFrom = this.nearFrom;
    nearFrom.fill(0);
    let near = 0;
    let n = 0;
    let found = 0;
    let extra = 0;
    let li = 0;
    // The caller's cut so far: keep.spill × the nearest RTT written, or the
    // keep.k-th least (top holds the least, ascending). It only falls as the
    // search goes on, so a crawler beyond it now is beyond it at the end, and
    // the caller would pass it over: it is not written out (its distance
    // still counts for the reach test).
    const top = this.kth;
    let tops = 0;
    let nearest = Infinity;
    let cut = Infinity;
    for (; li < L; li++) {
      // At the last level read, how far a crawler may lie and still matter.
      const limit = keep !== undefined && (extra === 1 || li === L - 1) ? cut : Infinity;
      for (let j = 0; j < B; j++) {
        const cell = this.blocks[base + li * B + j]!;
        if (cell < 0) continue;
        this.window(cell, t);
        if (limit < Infinity && this.windowBound(cell, h) > limit) continue;
        const w0 = cell * cap;
        const w1 = w0 + this.winCount[cell]!;
        for (let w = w0; w < w1; w++) {
          const c = ids[w]!;
          if (seen[c] === stamp) continue;
          seen[c] = stamp;
          if (!online[c]) {
            stale++;
            continue;
          }
          // predictRttAt, written out for the usual two dimensions (the same sums in the same order).
          let r: number;
          if (two) {
            const e0 = h0 - wv[w * 2]!;
            const e1 = h1 - wv[w * 2 + 1]!;
            r = Math.sqrt(e0 * e0 + e1 * e1) + hh + wh[w]!;
          } else r = predictRttAt(hv, hi, hh, wv, w * d, wh[w]!, d);
          found++;
          // The last level read: a crawler beyond the limit ranks after every one the
          // caller keeps, and no level follows whose reach test it could count for.
          if (r > limit) continue;
          // The Router's reach test is on the vector part: the RTT less both heights.
          const dist = r - hh - wh[w]!;
          let from = li;
          while (from < L && dist > reachAt[from]!) from++;
          if (from < L) nearFrom[from]!++;
          if (r > cut) continue;
          out[n] = c;
          rtt[n] = r;
          n++;
          if (keep !== undefined) {
            if (r < nearest) nearest = r;
            tops = keepLeast(top, tops, keep.k, r);
            cut = Math.max(keep.spill * nearest, tops === keep.k ? top[keep.k - 1]! : Infinity);
          }
        }
      }
      near += nearFrom[li]!;
      if (near >= want) {
        if (extra >= 1) break;
        extra++;
      }
    }
    this.staleRecords += stale;
    this.lastFound = found;
    this.lastNearest = nearest;
    this.lastKth = keep === undefined ? NaN : tops === keep.k ? top[keep.k - 1]! : Infinity;
    // The lookups: every level's at once when eagerLevels, else those read.
    const paid = (this.o.eagerLevels ? L : Math.min(L, li + 1)) * B;
    this.payLookups(base, paid, t);
    this.last.host = h;
    this.last.t = t;
    this.last.stale = stale;
    this.last.paid = paid;
    this.last.n = n;
    return n;
  }

  private payLookups(base: number, paid: number, t: number): void {
    for (let k = 0; k < paid; k++) {
      const cell = this.blocks[base + k]!;
      if (cell >= 0) this.lookup(this.cellLast, cell, t);
    }
  }

  /**
   * The same search again, for the same host at the same time, with nothing
   * in the overlay changed since (no join or leave, no other search): the
   * caller's `out` and `rtt` still hold what search() wrote, and the windows
   * are the same, so only the bill is repeated — the lookups (answered from
   * the Router's cache, or paid again when it keeps nothing) and the stale
   * records met. Returns the count search() returned, or −1 when the last
   * search was of another host or time.
   */
  repeatSearch(h: number, t: number): number {
    const last = this.last;
    if (last.host !== h || last.t !== t) return -1;
    this.staleRecords += last.stale;
    this.payLookups(h * this.L * this.B, last.paid, t);
    return last.n;
  }
}
