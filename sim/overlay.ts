// The DHT overlay the live crawlers build, modelled for the simulator.
//
// Live (src/dht): a crawler provides the keys of the coordinate-space cells it
// sits in, one per level (announce.ts, cells.ts); kad-dht re-provides them
// while it lives and every holder drops a record once its validity has passed
// (providerTiming). The manager's Router looks up the providers of the 2^d
// block of cells around a host's coordinate as cell-search.ts says: coarsest
// level first, stopping at the first level whose every cell answered
// completely; the candidates are the finest level's providers, widened coarser
// while too few. A record holder answers with every provider it stores; only
// the querier's own store (when the manager is itself among a cell's k
// holders) answers with its first LOCAL_PROVIDER_CAP, in the order the
// records were stored, and that answer is not complete. Cell answers are
// cached (cell-lookup.ts): served at once while younger than the max-stale
// age, refreshed in the background once older than the TTL.
//
// Here: the same cells (cellIndex/blockIndices of cells.ts, numbered instead
// of hashed), provider records that appear when a crawler joins and lapse one
// validity (plus, on average, half a cleanup interval) after its last
// re-provide when it leaves, the same search (cell-search.ts itself), the same
// cache (an answer is a snapshot of the records valid when it was fetched) —
// and a count of what the live system pays for it: DHT lookups and provides,
// each a Kademlia query of ⌈log₂ n⌉ rounds of α messages (a provide adds k
// ADD_PROVIDER messages).
//
// The jobs live beside this file: overlay-cells.ts (the cells, blocks and
// members, laid out once), provider-records.ts (the records, their re-provides
// and lapses, adaptive announcing, the provide bill), cell-cache.ts (the
// Router's cell and hash-lookup caches, the packed answers, the lookup bill),
// overlay-options.ts (the options and the Kademlia cost model). This file is
// the search that reads the cache (levels, candidates, widening, repeats, the
// whereIs diagnosis) and the one import path, with the run's counters.
import { predictRttAt } from '../src/coords/index.js';
import { candidatesFrom, cellSampleSeed, coarserCellJoins, drawSample, SampleScratch } from '../src/dht/cell-search.js';
import { keepLeast } from './spatial.js';
import type { FlatCoords } from './flat-coords.js';
import { overlayOptions, type OverlayOptions } from './overlay-options.js';
import { CellCache } from './cell-cache.js';
import { CellLayout, CHUNK } from './overlay-cells.js';
import { ProviderRecords } from './provider-records.js';
import { createRng, type Rng } from '../src/rng.js';

export { DEFAULT_OVERLAY_OPTIONS, kadLookupMessages, overlayOptions, recordSchedule, type OverlayOptions } from './overlay-options.js';

export class Overlay {
  readonly o: OverlayOptions;
  /** Levels in use, finest first (li = 0 is the finest; the search goes from L − 1 down). */
  readonly levels: number[];
  /** The cells, blocks and members (overlay-cells.ts); the fields below up to cellKeys are its arrays. */
  private readonly layout: CellLayout;
  private readonly L: number;
  /** Cells per search block (2^d). */
  private readonly B: number;
  private readonly C: number;
  private readonly dims: number;
  private readonly start: Int32Array;
  private readonly members: Int32Array;
  private readonly membersById: Int32Array;
  private readonly crawlerCell: Int32Array;
  private readonly blocks: Int32Array;
  private readonly cellLevel: Uint8Array;
  private readonly chunkStart: Int32Array;
  /** Cell names (for tests and reports): `level/i0,i1,...`. */
  readonly cellKeys: string[];
  /** The provider records (provider-records.ts); the fields below up to depth are its arrays. */
  private readonly records: ProviderRecords;
  private readonly validCount: Int32Array;
  private readonly changes: Int32Array;
  private readonly online: Uint8Array;
  private readonly recFrom: Float64Array;
  private readonly recUntil: Float64Array;
  private readonly depth: Uint8Array;
  /** The Router's cell cache and lookup bill (cell-cache.ts); the fields below up to winOrder are its arrays. */
  private readonly cache: CellCache;
  private readonly winIds: Int32Array;
  private readonly winVec: Float64Array;
  private readonly winHeight: Float64Array;
  private readonly winCount: Int32Array;
  private readonly winLen: Int32Array;
  private readonly winComplete: Uint8Array;
  private readonly winCut: Uint8Array;
  private readonly fetchedAt: Float64Array;
  private readonly winOrder: Int32Array;
  /** Draws each search's sample salt (cell-search.ts providerSample: a fresh draw per route). */
  private readonly sampleRng: Rng;
  private readonly sampleScratch = new SampleScratch();
  /** Stamps of the crawlers a search has written (seen[c] === stamp). */
  private readonly seen: Int32Array;
  private stamp = 0;
  private readonly hosts: FlatCoords;
  private readonly crawlers: FlatCoords;
  /** Providers per level looked up in the current search, coarsest first. */
  private readonly levelCounts: Int32Array;
  private kth = new Float64Array(64);
  // ---- what the live system would pay (lookups: cell-cache.ts; provides and density counts: provider-records.ts)
  /** Records found of crawlers that had already left (the Router asks them for their info; they do not answer). */
  staleRecords = 0;
  /** Levels the searches looked up, and provider records they offered as candidates (stale ones too). */
  levelsLooked = 0;
  offered = 0;
  /** Provider records the last search offered as candidates (stale ones too). */
  lastFound = 0;
  /** With `keep`: the least RTT the last search wrote out, and the keep.k-th least (Infinity when fewer). */
  lastNearest = Infinity;
  lastKth = Infinity;
  /** The last search (for repeatSearch); host −1 once a join or leave changed the overlay. */
  private readonly last = { host: -1, t: NaN, stale: 0, looked: 0, n: 0, salt: 0, from: 0 };

  constructor(hosts: FlatCoords, crawlers: FlatCoords, opts: Partial<OverlayOptions> = {}) {
    this.o = overlayOptions(opts);
    const layout = new CellLayout(hosts, crawlers, this.o.cells);
    this.layout = layout;
    this.levels = layout.levels;
    const L = layout.L;
    this.L = L;
    this.B = layout.B;
    const C = layout.C;
    this.C = C;
    this.dims = layout.dims;
    this.start = layout.start;
    this.members = layout.members;
    this.membersById = layout.membersById;
    this.crawlerCell = layout.crawlerCell;
    this.blocks = layout.blocks;
    this.cellLevel = layout.cellLevel;
    this.chunkStart = layout.chunkStart;
    this.cellKeys = layout.cellKeys;
    const records = new ProviderRecords(layout, this.o);
    this.records = records;
    this.validCount = records.validCount;
    this.changes = records.changes;
    this.online = records.online;
    this.recFrom = records.recFrom;
    this.recUntil = records.recUntil;
    this.depth = records.depth;
    this.hosts = hosts;
    this.crawlers = crawlers;
    const cache = new CellCache(layout, records, hosts, crawlers, this.o);
    this.cache = cache;
    this.winIds = cache.winIds;
    this.winVec = cache.winVec;
    this.winHeight = cache.winHeight;
    this.winCount = cache.winCount;
    this.winLen = cache.winLen;
    this.winComplete = cache.winComplete;
    this.winCut = cache.winCut;
    this.fetchedAt = cache.fetchedAt;
    this.winOrder = cache.winOrder;
    this.sampleRng = createRng(this.o.sampleSeed);
    this.seen = new Int32Array(C);
    this.levelCounts = new Int32Array(L);
  }

  /** Cells a crawler may announce (one per level; adaptive announcing provides the finer ones only in dense cells). */
  get cellsPerCrawler(): number {
    return this.L;
  }

  /** The most crawlers one search can write out. */
  get maxFound(): number {
    return this.C;
  }

  /** Number of distinct cells (announced or searched). */
  get cells(): number {
    return this.cellKeys.length;
  }

  /** The search block of host h at level index li (finest = 0), as cell names. */
  blockOf(h: number, li: number): string[] {
    return this.layout.blockOf(h, li);
  }

  // ---- the provider records' side (provider-records.ts)
  get onlineCount(): number {
    return this.records.onlineCount;
  }
  get provides(): number {
    return this.records.provides;
  }
  get provideMessages(): number {
    return this.records.provideMessages;
  }
  /** Crawlers' counts of their cells (adaptive announcing: GET_PROVIDERS lookups, paid as one lookup each). */
  get densityCounts(): number {
    return this.records.densityCounts;
  }
  get densityMessages(): number {
    return this.records.densityMessages;
  }
  /** Σ over crawlers of time online, minutes (closed at leave and at close()). */
  get onlineMinutes(): number {
    return this.records.onlineMinutes;
  }

  /** Levels crawler c announces now, coarsest first. */
  levelsAnnounced(c: number): number {
    return this.records.levelsAnnounced(c);
  }

  /** Until when crawler c's record at level index li (default: the coarsest, always announced) is found. */
  recordUntil(c: number, li = this.L - 1): number {
    return this.records.recordUntil(c, li);
  }

  /** True while some lookup finds crawler c's records (its coarsest, always announced). */
  findable(c: number, t: number): boolean {
    return this.records.findable(c, t);
  }

  /** Crawler c joins at t and provides its cells (provider-records.ts); the last search is forgotten. */
  join(c: number, t: number): void {
    this.last.host = -1;
    this.records.join(c, t);
  }

  /** Crawler c leaves at t; its records stay until they lapse. The last search is forgotten. */
  leave(c: number, t: number): void {
    this.last.host = -1;
    this.records.leave(c, t);
  }

  // ---- the cache's side (cell-cache.ts)
  get lookups(): number {
    return this.cache.lookups;
  }
  get lookupMessages(): number {
    return this.cache.lookupMessages;
  }
  /** Cell answers served from the Router's cache (a refresh past the TTL is paid as a lookup too). */
  get cacheHits(): number {
    return this.cache.cacheHits;
  }
  /** Cell answers cut to LOCAL_PROVIDER_CAP by the manager's own store. */
  get cutAnswers(): number {
    return this.cache.cutAnswers;
  }

  /** The hash-routing lookup for host h (kad getClosestPeers on the host's key, cached as the Router does). */
  hashLookup(h: number, t: number): void {
    this.cache.hashLookup(h, t);
  }

  /** Closes the books at the end of the run (re-provides and online time of those still online). */
  close(t: number): void {
    this.records.close(t);
  }

  /** Looks up the levels of host h's search at t as cell-search.ts orders
   * them (coarsest first, until a level's every cell answered completely),
   * paying the lookups; returns how many levels, their provider counts in levelCounts. */
  private lookLevels(h: number, t: number, from = 0): number {
    const L = this.L;
    const B = this.B;
    const base = h * L * B;
    let k = from;
    for (; k < L; ) {
      const li = L - 1 - k;
      let count = 0;
      let complete = true;
      for (let j = 0; j < B; j++) {
        const cell = this.blocks[base + li * B + j]!;
        if (cell < 0) continue;
        this.cache.serve(cell, t);
        count += Math.min(this.winCount[cell]!, this.o.search.perCell);
        if (!this.winComplete[cell]) complete = false;
      }
      this.levelCounts[k++] = count;
      if (complete) break;
    }
    return k;
  }

  /**
   * The Router's search for host h at time t (cell-search.ts): writes the
   * online crawlers among the candidates into `out` and their predicted RTTs
   * to the host into `rtt`; returns how many. Pays its lookups.
   *
   * With `keep`, the caller ranks only crawlers within keep.spill × the
   * nearest RTT found or among the keep.k nearest (the placement policy puts
   * every other one after them): a cell answer that lies wholly beyond that
   * is not read, and crawlers beyond it are not written out.
   */
  search(h: number, t: number, out: Int32Array, rtt: Float64Array, keep?: { spill: number; k: number }): number {
    this.records.advance(t);
    // A fresh sample for every route (cell-search.ts providerSample), as the live Router draws.
    const salt = Math.floor(this.sampleRng.next() * 2 ** 32) >>> 0;
    const looked = this.lookLevels(h, t);
    const from = candidatesFrom(this.levelCounts, this.o.search, looked);
    const n = this.gather(h, looked, from, salt, out, rtt, keep);
    this.cache.landRefreshes(t);
    this.levelsLooked += looked;
    this.offered += this.lastFound;
    const last = this.last;
    last.host = h;
    last.t = t;
    last.looked = looked;
    last.salt = salt;
    return n;
  }

  /**
   * The last search (of host h at t, nothing changed since) widened to the
   * next coarser level (cell-search.ts widenFrom: its candidates found no
   * crawler with room): writes the candidates as search() does and returns
   * how many, or −1 when there is no coarser level or the last search was of
   * another host or time. Pays no lookup: the search looked up every coarser
   * level first (coarsest first), so their answers are the ones just fetched
   * or served from the cache; the same salt draws the same samples.
   */
  widen(h: number, t: number, out: Int32Array, rtt: Float64Array, keep?: { spill: number; k: number }): number {
    const last = this.last;
    if (last.host !== h || last.t !== t || last.from === 0) return -1;
    const before = this.lastFound;
    // gather counts every stale record it meets again: only the new ones are new.
    this.staleRecords -= last.stale;
    const n = this.gather(h, last.looked, last.from - 1, last.salt, out, rtt, keep);
    // The providers offered beyond the first search's (each an info query live).
    this.offered += Math.max(0, this.lastFound - before);
    return n;
  }

  /** search()'s candidates: the providers of levels `from` .. looked − 1 of
   * host h's search (with the coarser levels' complete cells), each dense
   * answer sampled with `salt`, written out as search() says. */
  private gather(h: number, looked: number, from: number, salt: number, out: Int32Array, rtt: Float64Array, keep?: { spill: number; k: number }): number {
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
    const order = this.winOrder;
    const perCell = this.o.search.perCell;
    const seen = this.seen;
    const online = this.online;
    let stale = 0;
    const L = this.L;
    const B = this.B;
    const base = h * L * B;
    this.stamp = (this.stamp + 1) | 0;
    const stamp = this.stamp;
    let n = 0;
    // The caller's cut so far: keep.spill × the nearest RTT written, or the
    // keep.k-th least (top holds the least, ascending). It only falls as the
    // search goes on, so a crawler beyond it now is beyond it at the end, and
    // the caller would pass it over: it is not written out.
    const top = this.kth;
    let tops = 0;
    let nearest = Infinity;
    let cut = Infinity;
    // The candidate levels, finest first (the nearest crawlers tighten the cut
    // soonest), then the complete cells of the coarser ones (cell-search.ts coarserCellJoins).
    let joined = 0;
    for (let k = looked - 1; k >= 0; k--) {
      const li = L - 1 - k;
      for (let j = 0; j < B; j++) {
        const cell = this.blocks[base + li * B + j]!;
        if (cell < 0) continue;
        if (k < from) {
          if (!coarserCellJoins(this.winComplete[cell] === 1, this.o.search)) continue;
          joined += Math.min(this.winCount[cell]!, this.o.search.perCell);
        }
        this.cache.build(cell);
        const a0 = this.start[cell]!;
        const len = this.winLen[cell]!;
        const q0 = this.chunkStart[cell]!;
        // A dense answer: this route's sample of it (cell-search.ts providerSample),
        // perCell positions in the answer's order; else every member, chunk by chunk.
        const sampled = len > perCell;
        if (sampled) this.drawCell(len, li, j, salt);
        const picked = this.sampleScratch.picked;
        const m = sampled ? perCell : len;
        for (let i = 0; i < m; i++) {
          let w: number;
          if (sampled) w = order[a0 + picked[i]!]!;
          else {
            w = a0 + i;
            if ((i & (CHUNK - 1)) === 0 && cut < Infinity && this.cache.chunkBound(q0 + i / CHUNK, h) > cut) {
              i += CHUNK - 1;
              continue;
            }
          }
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
    }
    this.staleRecords += stale;
    this.lastFound = (this.levelCounts[from] ?? 0) + joined;
    this.lastNearest = nearest;
    this.lastKth = keep === undefined ? NaN : tops === keep.k ? top[keep.k - 1]! : Infinity;
    this.last.stale = stale;
    this.last.n = n;
    this.last.from = from;
    return n;
  }

  /**
   * Where crawler c stood in the last search (the routing diagnosis, for a
   * route that did not go to the oracle's crawler), judged at the finest
   * candidate level whose block holds its cell: outside every candidate
   * level's block ('outside'); its cell there is one it does not announce
   * (adaptive announcing: too sparse for it to go that fine, 'unannounced');
   * the cached answer was fetched before its record ('staleAnswer'); the
   * answer was cut to the manager's own first LOCAL_PROVIDER_CAP ('cut');
   * every such answer's sample left it out ('sampled-out'); or it was among
   * the candidates ('found'). Reads the last search's state; changes nothing.
   */
  whereIs(c: number): 'outside' | 'unannounced' | 'staleAnswer' | 'cut' | 'sampled-out' | 'found' {
    const { host: h, looked, from, salt } = this.last;
    if (h < 0) throw new Error('overlay: whereIs without a search just made');
    const L = this.L;
    const B = this.B;
    let why: 'outside' | 'unannounced' | 'staleAnswer' | 'cut' | 'sampled-out' | undefined;
    // Finest candidate level first (the search reads them so), then the coarser levels' complete cells.
    for (let k = looked - 1; k >= 0; k--) {
      const li = L - 1 - k;
      const cell = this.crawlerCell[c * L + li]!;
      let j = 0;
      while (j < B && this.blocks[(h * L + li) * B + j] !== cell) j++;
      if (j === B) continue;
      if (k < from && !coarserCellJoins(this.winComplete[cell] === 1, this.o.search)) continue;
      const a0 = this.start[cell]!;
      const len = this.winLen[cell]!;
      let w = a0;
      while (w < a0 + len && this.winIds[w] !== c) w++;
      if (w < a0 + len) {
        if (this.drawnFrom(cell, li, j, salt, w)) return 'found';
        why ??= 'sampled-out';
        continue;
      }
      const r = c * L + li;
      why ??= li < L - this.depth[c]! ? 'unannounced' : this.recFrom[r]! > this.fetchedAt[cell]! ? 'staleAnswer' : this.winCut[cell] ? 'cut' : 'unannounced';
    }
    return why ?? 'outside';
  }

  /** The route's sample of a dense answer of `len` at block slot j of level
   * index li, into sampleScratch.picked: the seed is the route's salt, the level
   * and the slot (cell-search.ts cellSampleSeed), as the live Router draws it. */
  private drawCell(len: number, li: number, j: number, salt: number): void {
    drawSample(len, this.o.search.perCell, cellSampleSeed(salt, this.levels[li]!, j), this.sampleScratch);
  }

  /** Whether slot w of `cell`'s answer (block slot j of level index li) was
   * among the route's candidates: a whole answer keeps every slot; a sampled
   * one (more than perCell) keeps the slots of the draw search() made — the
   * same seed (the route's salt, the level, the block slot), so the same picks. */
  private drawnFrom(cell: number, li: number, j: number, salt: number, w: number): boolean {
    const len = this.winLen[cell]!;
    const perCell = this.o.search.perCell;
    if (len <= perCell) return true;
    this.drawCell(len, li, j, salt);
    const a0 = this.start[cell]!;
    const picked = this.sampleScratch.picked;
    for (let i = 0; i < perCell; i++) if (this.winOrder[a0 + picked[i]!] === w) return true;
    return false;
  }

  /**
   * The same search again, for the same host at the same time, with nothing
   * in the overlay changed since (no join or leave, no other search): the
   * caller's `out` and `rtt` still hold what search() wrote, so only the bill
   * is repeated — the lookups (answered from the Router's cache, or paid
   * again when it keeps nothing) and the stale records met. Returns the count
   * search() returned, or −1 when the last search was of another host or time.
   */
  repeatSearch(h: number, t: number): number {
    const last = this.last;
    if (last.host !== h || last.t !== t) return -1;
    this.staleRecords += last.stale;
    this.levelsLooked += last.looked;
    this.offered += this.lastFound;
    const L = this.L;
    const B = this.B;
    for (let k = 0; k < last.looked; k++) {
      for (let j = 0; j < B; j++) {
        const cell = this.blocks[(h * L + L - 1 - k) * B + j]!;
        if (cell >= 0) this.cache.serve(cell, t);
      }
    }
    this.cache.landRefreshes(t);
    return last.n;
  }
}
