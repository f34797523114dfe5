// The provider records of the modelled overlay and what keeps them: a
// crawler provides its cells when it joins (adaptive announcing: the coarsest,
// then finer ones as its density counts find them dense, announce.ts), kad-dht
// re-provides them every reprovideEvery while it lives, and once it leaves
// each record lapses one validity after its last provide (providerTiming,
// overlay-options.ts recordSchedule). Also the bill of provides and density
// counts (a Kademlia query each, kadLookupMessages). It stands apart from
// overlay.ts because it is the DHT's side (what holders store and when it
// lapses); the Overlay's cache and search read it, as the Router reads the DHT.
//
// The Overlay forgets its last search (repeatSearch, widen, whereIs) on every
// join and leave; a density count that changes a crawler's depth runs only
// inside join, leave or a new search, so it needs no word of its own.
import { announceFiner, dropFinest } from '../src/dht/announce.js';
import { CountQueue } from './count-queue.js';
import { EventQueue } from './heap.js';
import type { CellLayout } from './overlay-cells.js';
import { kadLookupMessages, MS_PER_MINUTE, recordSchedule, type OverlayOptions } from './overlay-options.js';

export class ProviderRecords {
  private readonly L: number;
  private readonly C: number;
  private readonly crawlerCell: Int32Array;
  /** Records valid now per cell (lapses applied as they fall due: `lapses`),
   * and a count of the changes to them (a record added or lapsed). */
  readonly validCount: Int32Array;
  readonly changes: Int32Array;
  private readonly lapses = new EventQueue();
  readonly online: Uint8Array;
  private readonly joinedAt: Float64Array;
  /** Crawler c's record at level index li (r = c·L + li) is found from
   * recFrom[r] (its first provide, unless an earlier record still held) until
   * recUntil[r] (Infinity while re-provided); recSince[r]: its first provide
   * since re-providing began (re-provides follow every reprovideEvery). */
  readonly recFrom: Float64Array;
  readonly recUntil: Float64Array;
  private readonly recSince: Float64Array;
  /** Levels crawler c announces, coarsest first (adaptive announcing: 1 .. L). */
  readonly depth: Uint8Array;
  /** Each online crawler's next density count (countAt[c]: its time, NaN when none). */
  private readonly counts = new CountQueue();
  private readonly countAt: Float64Array;
  private readonly countEvery: number;
  private readonly reprovideEvery: number;
  private readonly visibleFor: number;
  onlineCount = 0;
  /** kadLookupMessages at lookupCostFor crawlers online (−1: not yet computed). */
  private lookupCost = 0;
  private lookupCostFor = -1;
  // ---- what the live system would pay
  provides = 0;
  provideMessages = 0;
  /** Crawlers' counts of their cells (adaptive announcing: GET_PROVIDERS lookups, paid as one lookup each). */
  densityCounts = 0;
  densityMessages = 0;
  /** Σ over crawlers of time online, minutes (closed at leave and at close()). */
  onlineMinutes = 0;

  constructor(
    layout: CellLayout,
    private readonly o: OverlayOptions,
  ) {
    const L = layout.L;
    const C = layout.C;
    const nCells = layout.cellKeys.length;
    this.L = L;
    this.C = C;
    this.crawlerCell = layout.crawlerCell;
    this.validCount = new Int32Array(nCells);
    this.changes = new Int32Array(nCells);
    this.online = new Uint8Array(C);
    this.joinedAt = new Float64Array(C);
    this.recFrom = new Float64Array(C * L).fill(Infinity);
    this.recUntil = new Float64Array(C * L).fill(-Infinity);
    this.recSince = new Float64Array(C * L);
    this.depth = new Uint8Array(C);
    this.countAt = new Float64Array(C).fill(NaN);
    this.countEvery = o.densityCheckMs / MS_PER_MINUTE;
    const sched = recordSchedule(o.providerTtlMs);
    this.reprovideEvery = sched.reprovideEvery;
    this.visibleFor = sched.visibleAfterLastProvide;
  }

  private provideCost(n: number): number {
    return kadLookupMessages(n, this.o.kadAlpha) + this.o.kadK;
  }

  /** Levels crawler c announces now, coarsest first. */
  levelsAnnounced(c: number): number {
    return this.depth[c]!;
  }

  /** Until when crawler c's record at level index li (default: the coarsest, always announced) is found. */
  recordUntil(c: number, li = this.L - 1): number {
    return this.recUntil[c * this.L + li]!;
  }

  /** Crawler c provides its cell at level index li at t (kad-dht re-provides it from then on). */
  private provide(c: number, li: number, t: number): void {
    const r = c * this.L + li;
    // A holder still storing the last record keeps its place in the store.
    if (!(this.recUntil[r]! > t)) {
      this.recFrom[r] = t;
      const cell = this.crawlerCell[r]!;
      this.validCount[cell]!++;
      this.changes[cell]!++;
    }
    this.recUntil[r] = Infinity;
    this.recSince[r] = t;
    this.provides++;
    this.provideMessages += this.provideCost(this.onlineCount);
  }

  /** Re-provides of record r since recSince, up to t; returns the time of the last provide. */
  private settle(r: number, t: number): number {
    const since = this.recSince[r]!;
    const periods = Math.floor((t - since) / this.reprovideEvery);
    this.provides += periods;
    this.provideMessages += periods * this.provideCost(this.onlineCount);
    return since + periods * this.reprovideEvery;
  }

  /** Crawler c stops re-providing its record at level index li at t: it lapses one validity after the last provide. */
  private unprovide(c: number, li: number, t: number): void {
    const r = c * this.L + li;
    this.recUntil[r] = this.settle(r, t) + this.visibleFor;
    this.lapses.push(this.recUntil[r]!, r);
  }

  /** Crawler c joins at t and provides its cells: the coarsest (then finer ones as
   * its density counts find them dense), or every level without adaptive announcing. */
  join(c: number, t: number): void {
    if (this.online[c]) return;
    this.advance(t);
    this.online[c] = 1;
    this.onlineCount++;
    this.joinedAt[c] = t;
    const L = this.L;
    this.depth[c] = this.o.adaptive ? 1 : L;
    for (let li = L - this.depth[c]!; li < L; li++) this.provide(c, li, t);
    if (this.o.adaptive) this.densityCount(c, t);
  }

  /** Crawler c leaves at t. Notified or not, its records stay until they
   * lapse: withdrawing only stops re-providing. */
  leave(c: number, t: number): void {
    if (!this.online[c]) return;
    this.advance(t);
    const L = this.L;
    for (let li = L - this.depth[c]!; li < L; li++) this.unprovide(c, li, t);
    this.onlineMinutes += t - this.joinedAt[c]!;
    this.online[c] = 0;
    this.onlineCount--;
    this.countAt[c] = NaN;
  }

  /**
   * A crawler's count of its finest announced cell (announce.ts chooseDepth:
   * a GET_PROVIDERS lookup, answered with the records valid now): dense, it
   * provides one level finer at once; else it counts the cell above and drops
   * its finest level when that has thinned. The next count follows countEvery later.
   */
  private densityCount(c: number, t: number): void {
    this.applyLapses(t);
    const L = this.L;
    const d = this.depth[c]!;
    const denseAt = this.o.search.denseAt;
    const finest = L - d;
    this.densityCounts++;
    this.densityMessages += this.lookupMessagesNow();
    if (announceFiner(this.validCount[this.crawlerCell[c * L + finest]!]!, d, L, denseAt)) {
      this.depth[c] = d + 1;
      this.provide(c, finest - 1, t);
      } else if (d >= 2) {
      this.densityCounts++;
      this.densityMessages += this.lookupMessagesNow();
      if (dropFinest(this.validCount[this.crawlerCell[c * L + finest + 1]!]!, d, denseAt)) {
        this.depth[c] = d - 1;
        this.unprovide(c, finest, t);
          }
    }
    this.countAt[c] = t + this.countEvery;
    this.counts.push(this.countAt[c]!, c);
  }

  /** Makes the density counts due by t, in time order. */
  advance(t: number): void {
    const q = this.counts;
    while (q.size > 0 && q.peekTime() <= t) {
      const at = q.peekTime();
      const c = q.pop();
      // Still this crawler's next count (not one from an earlier stint).
      if (this.online[c] && this.countAt[c] === at) this.densityCount(c, at);
    }
    this.applyLapses(t);
  }

  /** Drops from validCount the records that lapsed by t. */
  applyLapses(t: number): void {
    const q = this.lapses;
    while (q.peekTime() <= t) {
      const at = q.peekTime();
      const r = q.pop();
      // Still the record that lapses then (not provided again since).
      if (this.recUntil[r] !== at) continue;
      const cell = this.crawlerCell[r]!;
      this.validCount[cell]!--;
      this.changes[cell]!++;
    }
  }

  /** Closes the books at the end of the run (re-provides and online time of those still online). */
  close(t: number): void {
    const L = this.L;
    for (let c = 0; c < this.C; c++) {
      if (!this.online[c]) continue;
      for (let li = L - this.depth[c]!; li < L; li++) {
        const r = c * L + li;
        this.settle(r, t);
        this.recSince[r] = t;
      }
      this.onlineMinutes += t - this.joinedAt[c]!;
      this.joinedAt[c] = t;
    }
  }

  /** True while some lookup finds crawler c's records (its coarsest, always announced). */
  findable(c: number, t: number): boolean {
    const r = c * this.L + this.L - 1;
    return this.recFrom[r]! <= t && this.recUntil[r]! > t;
  }

  /** The messages of one lookup with the crawlers online now. */
  lookupMessagesNow(): number {
    // It changes only with the online count (a join or a leave).
    if (this.lookupCostFor !== this.onlineCount) {
      this.lookupCostFor = this.onlineCount;
      this.lookupCost = kadLookupMessages(this.onlineCount, this.o.kadAlpha);
    }
    return this.lookupCost;
  }
}
