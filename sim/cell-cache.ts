// The Router's caches, modelled: each cell's answer as CellLookup
// (cell-lookup.ts) keeps it — served at once while younger than the max-stale
// age, refreshed in the background once older than the TTL, cut to
// LOCAL_PROVIDER_CAP when the manager's own store answers — and the hash
// lookup per host. An answer is a snapshot of the records valid when it was
// fetched, packed (ids, coordinates, heights; chunk boxes or the sample
// order) only when a search reads it. Also the lookup bill (a Kademlia query
// each). It stands apart from overlay.ts, which searches these answers, as
// the live cache stands apart from the search (cell-lookup.ts, cell-search.ts).
// The Overlay holds references to the answer arrays (no extra hop per candidate).
import { answerComplete, LOCAL_PROVIDER_CAP } from '../src/dht/cell-search.js';
import type { FlatCoords } from './flat-coords.js';
import { CHUNK, type CellLayout } from './overlay-cells.js';
import { MS_PER_MINUTE, type OverlayOptions } from './overlay-options.js';
import type { ProviderRecords } from './provider-records.js';
import { hash32 } from './spatial.js';

export class CellCache {
  private readonly L: number;
  private readonly dims: number;
  private readonly start: Int32Array;
  private readonly members: Int32Array;
  private readonly membersById: Int32Array;
  private readonly cellLevel: Uint8Array;
  private readonly chunkStart: Int32Array;
  private readonly validCount: Int32Array;
  private readonly changes: Int32Array;
  private readonly recFrom: Float64Array;
  private readonly recUntil: Float64Array;
  /** changes[cell] when its packed answer was built (an unchanged cell's answer is not packed again). */
  private readonly builtChanges: Int32Array;
  /**
   * The Router's cached answer for each cell, fetched at fetchedAt: how many
   * providers and whether it was complete (or cut to the manager's own first
   * LOCAL_PROVIDER_CAP: winCut). Its members are packed from start[cell] on
   * (crawler ids, coordinates, heights; winLen of them) only when a search
   * reads them (winBuilt), in the cell's spatial order. An answer read whole
   * (no more than perCell) gets a bounding box and least height per chunk of
   * CHUNK, so a search skips chunks beyond its cut; a sampled one gets winOrder.
   */
  readonly winIds: Int32Array;
  readonly winVec: Float64Array;
  readonly winHeight: Float64Array;
  readonly winCount: Int32Array;
  readonly winLen: Int32Array;
  readonly winComplete: Uint8Array;
  readonly winCut: Uint8Array;
  private readonly winBuilt: Uint8Array;
  private readonly chunkLo: Float64Array;
  private readonly chunkHi: Float64Array;
  private readonly chunkMinHeight: Float64Array;
  readonly fetchedAt: Float64Array;
  /** A sampled answer in the answer's order (by crawler index, as a record
   * holder lists providers stored in join order): winOrder[start[cell] + p] is
   * the slot of its p-th provider. A sample draws positions in this order. */
  readonly winOrder: Int32Array;
  /** Scratch of build: each kept crawler's slot (slotOf[c], valid while slotMark[c] === buildStamp). */
  private readonly slotOf: Int32Array;
  private readonly slotMark: Int32Array;
  private buildStamp = 0;
  /** Cells served from the cache past their TTL in this search: refreshed once it is done. */
  private readonly refresh: Int32Array;
  private refreshing = 0;
  /** When each host's hash-routing lookup was last paid (the Router's cache of getClosestPeers). */
  private readonly hostLast: Float64Array;
  private readonly ttlMinutes: number;
  private readonly maxStaleMinutes: number;
  // ---- what the live system would pay (provides and density counts: provider-records.ts)
  lookups = 0;
  lookupMessages = 0;
  /** Cell answers served from the Router's cache (a refresh past the TTL is paid as a lookup too). */
  cacheHits = 0;
  /** Cell answers cut to LOCAL_PROVIDER_CAP by the manager's own store. */
  cutAnswers = 0;

  constructor(
    layout: CellLayout,
    private readonly records: ProviderRecords,
    private readonly hosts: FlatCoords,
    private readonly crawlers: FlatCoords,
    private readonly o: OverlayOptions,
  ) {
    this.L = layout.L;
    this.dims = layout.dims;
    this.start = layout.start;
    this.members = layout.members;
    this.membersById = layout.membersById;
    this.cellLevel = layout.cellLevel;
    this.chunkStart = layout.chunkStart;
    this.validCount = records.validCount;
    this.changes = records.changes;
    this.recFrom = records.recFrom;
    this.recUntil = records.recUntil;
    const C = layout.C;
    const H = hosts.height.length;
    const nCells = layout.cellKeys.length;
    const chunks = this.chunkStart[nCells]!;
    this.chunkLo = new Float64Array(chunks * this.dims);
    this.chunkHi = new Float64Array(chunks * this.dims);
    this.chunkMinHeight = new Float64Array(chunks);
    const slots = this.members.length;
    this.winIds = new Int32Array(slots);
    this.winOrder = new Int32Array(slots);
    this.slotOf = new Int32Array(C);
    this.slotMark = new Int32Array(C);
    this.winVec = new Float64Array(slots * this.dims);
    this.winHeight = new Float64Array(slots);
    this.winCount = new Int32Array(nCells);
    this.winLen = new Int32Array(nCells);
    this.winComplete = new Uint8Array(nCells);
    this.winCut = new Uint8Array(nCells);
    this.winBuilt = new Uint8Array(nCells);
    this.builtChanges = new Int32Array(nCells).fill(-1);
    this.fetchedAt = new Float64Array(nCells).fill(-Infinity);
    this.refresh = new Int32Array(layout.L * layout.B);
    this.hostLast = new Float64Array(H).fill(-Infinity);
    this.ttlMinutes = o.cacheTtlMs / MS_PER_MINUTE;
    this.maxStaleMinutes = o.maxStaleMs / MS_PER_MINUTE;
  }

  /** Pays one DHT lookup at t. */
  pay(): void {
    this.lookups++;
    this.lookupMessages += this.records.lookupMessagesNow();
  }

  /** The hash-routing lookup for host h (kad getClosestPeers on the host's key, cached as the Router does). */
  hashLookup(h: number, t: number): void {
    if (t - this.hostLast[h]! < this.o.hashCacheTtlMs / MS_PER_MINUTE) {
      this.cacheHits++;
      return;
    }
    this.hostLast[h] = t;
    this.pay();
  }

  /** The answer for `cell` at t, as CellLookup.providers gives it: the cached
   * one while younger than max-stale (a refresh is paid once past the TTL,
   * and lands after this search), else a fresh one. */
  serve(cell: number, t: number): void {
    const age = t - this.fetchedAt[cell]!;
    if (age < this.maxStaleMinutes) {
      this.cacheHits++;
      if (age >= this.ttlMinutes) {
        this.pay();
        this.refresh[this.refreshing++] = cell;
      }
      return;
    }
    this.pay();
    this.fetch(cell, t);
  }

  /** Whether the manager is among the k holders of `cell`'s records (chance k / n, fixed per cell and n). */
  private holdsOwn(cell: number): boolean {
    return this.o.ownStore && hash32(cell, 0x6d616e) / 2 ** 32 < this.o.kadK / (this.records.onlineCount + 1);
  }

  /** A DHT lookup of `cell` at t: as many records as are valid then, cut to
   * LOCAL_PROVIDER_CAP when the manager's own store answers. */
  private fetch(cell: number, t: number): void {
    this.records.applyLapses(t);
    let got = this.validCount[cell]!;
    let whole = true;
    if (got >= LOCAL_PROVIDER_CAP && this.holdsOwn(cell)) {
      got = LOCAL_PROVIDER_CAP;
      whole = false;
      this.cutAnswers++;
    }
    this.winCount[cell] = got;
    // The same records as the answer packed last (nothing added or lapsed, the same cut): it stands.
    if (this.winCut[cell] !== (whole ? 0 : 1) || this.builtChanges[cell] !== this.changes[cell]) this.winBuilt[cell] = 0;
    this.winCut[cell] = whole ? 0 : 1;
    this.winComplete[cell] = answerComplete(got, whole, this.o.search) ? 1 : 0;
    this.fetchedAt[cell] = t;
  }

  /** Packs the members of `cell`'s cached answer (the records valid when it
   * was fetched; the earliest stored LOCAL_PROVIDER_CAP when cut) for a search to read. */
  build(cell: number): void {
    if (this.winBuilt[cell]) return;
    const at = this.fetchedAt[cell]!;
    const d = this.dims;
    const a0 = this.start[cell]!;
    const end = this.start[cell + 1]!;
    const li = this.cellLevel[cell]!;
    const L = this.L;
    let got = 0;
    for (let i = a0; i < end; i++) {
      const c = this.members[i]!;
      const r = c * L + li;
      if (!(this.recFrom[r]! <= at && this.recUntil[r]! > at)) continue;
      this.winIds[a0 + got++] = c;
    }
    if (this.winCut[cell] && got > LOCAL_PROVIDER_CAP) {
      // The in-memory datastore iterates in insertion order: the earliest records stored (then back in Z order).
      const first = Array.from(this.winIds.subarray(a0, a0 + got))
        .sort((x, y) => this.recFrom[x * L + li]! - this.recFrom[y * L + li]! || x - y)
        .slice(0, LOCAL_PROVIDER_CAP);
      const keep = new Set(first);
      let k = 0;
      for (let w = a0; w < a0 + got; w++) if (keep.has(this.winIds[w]!)) this.winIds[a0 + k++] = this.winIds[w]!;
      got = k;
    }
    for (let w = a0; w < a0 + got; w++) {
      const c = this.winIds[w]!;
      for (let a = 0; a < d; a++) this.winVec[w * d + a] = this.crawlers.vec[c * d + a]!;
      this.winHeight[w] = this.crawlers.height[c]!;
    }
    // A sampled answer is read at drawn positions (winOrder); a whole one chunk by chunk.
    if (got > this.o.search.perCell) this.orderById(cell, got);
    else this.chunkBoxes(cell, got);
    this.winLen[cell] = got;
    this.winBuilt[cell] = 1;
    this.builtChanges[cell] = this.changes[cell]!;
  }

  /** winOrder of `cell`'s packed answer (its `got` members): their slots by crawler index. */
  private orderById(cell: number, got: number): void {
    const a0 = this.start[cell]!;
    const end = this.start[cell + 1]!;
    const stamp = ++this.buildStamp;
    for (let w = a0; w < a0 + got; w++) {
      const c = this.winIds[w]!;
      this.slotOf[c] = w;
      this.slotMark[c] = stamp;
    }
    let p = a0;
    for (let i = a0; i < end; i++) {
      const c = this.membersById[i]!;
      if (this.slotMark[c] === stamp) this.winOrder[p++] = this.slotOf[c]!;
    }
  }

  /** A bounding box and least height per chunk of `cell`'s packed answer (its `got` members). */
  private chunkBoxes(cell: number, got: number): void {
    const d = this.dims;
    const a0 = this.start[cell]!;
    const q0 = this.chunkStart[cell]!;
    for (let q = 0; q * CHUNK < got; q++) {
      const w0 = a0 + q * CHUNK;
      const w1 = Math.min(a0 + got, w0 + CHUNK);
      let minH = Infinity;
      for (let w = w0; w < w1; w++) if (this.winHeight[w]! < minH) minH = this.winHeight[w]!;
      this.chunkMinHeight[q0 + q] = minH;
      for (let a = 0; a < d; a++) {
        let lo = Infinity;
        let hi = -Infinity;
        for (let w = w0; w < w1; w++) {
          const x = this.winVec[w * d + a]!;
          if (x < lo) lo = x;
          if (x > hi) hi = x;
        }
        this.chunkLo[(q0 + q) * d + a] = lo;
        this.chunkHi[(q0 + q) * d + a] = hi;
      }
    }
  }

  /** A lower bound on the predicted RTT from host h to any member of chunk q. */
  chunkBound(q: number, h: number): number {
    const d = this.dims;
    let s = 0;
    for (let a = 0; a < d; a++) {
      const x = this.hosts.vec[h * d + a]!;
      const lo = this.chunkLo[q * d + a]!;
      const hi = this.chunkHi[q * d + a]!;
      const e = x < lo ? lo - x : x > hi ? x - hi : 0;
      s += e * e;
    }
    return Math.sqrt(s) + this.hosts.height[h]! + this.chunkMinHeight[q]!;
  }

  /** Lands the background refreshes this search started. */
  landRefreshes(t: number): void {
    for (let i = 0; i < this.refreshing; i++) this.fetch(this.refresh[i]!, t);
    this.refreshing = 0;
  }
}
