// Announces this crawler under the cells of coordinate space it sits in, as
// short-lived DHT provider records (kad-dht re-provides them at half-life
// while we live; they expire within one TTL after we stop). When the
// coordinate moves to another cell the new cells are provided and the old ones
// no longer re-provided. `withdraw` stops all re-providing.
//
// Only the levels a router reads are announced: the coarsest always, a finer
// one only where the cell above it is dense. A router searches coarsest first
// and stops at a block whose cells each hold fewer than DEFAULT_DENSE_CELL
// crawlers (cell-search.ts), so a finer
// record in a sparse cell is never read — yet each one is a DHT walk of ~15
// FIND_NODE and 20 ADD_PROVIDER, re-provided every half TTL. The announcer
// counts the crawlers of its finest announced cell (a router's GET_PROVIDERS
// lookup, cell-lookup.ts, far cheaper than a provide): dense, it
// adds the next finer level; when the cell above holds fewer than half the
// dense mark, it drops its finest one. It counts right after announcing a
// cell, then every `densityCheckMs` (half the TTL; `densityFirstGapMs` can make
// the first gaps shorter, doubling — off by default, see the option). A cell that turns
// dense between two counts: a router takes the candidates of the finest level
// it looked up (cell-search.ts), widened coarser only while fewer than
// minCandidates, so a crawler not yet announced one level finer can be missed
// there until its next count.
//
// Every provide is a DHT walk, so a move is announced only when it is real: an
// announced cell is kept while the coordinate stays within a quarter cell of it
// (hysteresis), a new set of cells must be the same on `stableChecks`
// consecutive checks (a coordinate jittering across a boundary never is), and
// re-announcements are at least `minGapMs` apart.
import type { Logger } from 'pino';
import type { Libp2p } from '@libp2p/interface';
import type { CID } from 'multiformats/cid';
import type { Coordinate } from '../coords/index.js';
import type { KadDHT } from '@libp2p/kad-dht';
import { announceCells, DEFAULT_CELLS, DEFAULT_DENSE_CELL, insideWithMargin, type Cell, type CellOptions } from './cells.js';
import { CellLookup } from './cell-lookup.js';

/** Default lifetime of provider records (cell announcements), ms. A crawler
 * that vanishes stays announced this long at most; routers skip it sooner,
 * on its first failed exchange. libp2p.ts configures kad-dht with it. */
export const DEFAULT_PROVIDER_TTL_MS = 600_000;

/** How kad-dht keeps provider records of lifetime `ttlMs` (libp2p.ts
 * configures it so; the simulator models the same, sim/overlay.ts): a record
 * is valid `validityMs` after it was (re)provided; every `checkMs` each node
 * re-provides its own records that expire within `thresholdMs` (at half-life;
 * the scan is local, only the records past half-life cost a network query);
 * every `cleanupMs` each node deletes the expired records it holds. */
export function providerTiming(ttlMs: number = DEFAULT_PROVIDER_TTL_MS): { validityMs: number; thresholdMs: number; checkMs: number; cleanupMs: number } {
  return {
    validityMs: ttlMs,
    thresholdMs: Math.floor(ttlMs / 2),
    checkMs: Math.max(1000, Math.min(60_000, Math.floor(ttlMs / 4))),
    cleanupMs: Math.max(1, Math.ceil(ttlMs / 3000)) * 1000,
  };
}

/** The adaptive-announcing rule (the Announcer follows it live, the simulator
 * models it: sim/overlay.ts). After counting `count` crawlers in its finest
 * announced cell, a crawler announcing `depth` of `levels` levels (coarsest
 * first) announces one level finer when that cell is dense. */
export function announceFiner(count: number, depth: number, levels: number, denseAt: number = DEFAULT_DENSE_CELL): boolean {
  return count >= denseAt && depth < levels;
}

/** Otherwise, with two levels or more announced, it counts the cell above its
 * finest one and drops the finest level when that holds fewer than half the
 * dense mark (routers stop above it: nobody reads the finest record). */
export function dropFinest(countAbove: number, depth: number, denseAt: number = DEFAULT_DENSE_CELL): boolean {
  return depth >= 2 && countAbove < denseAt / 2;
}

export interface AnnouncerOptions {
  libp2p: Libp2p;
  coord: () => Coordinate;
  cells?: CellOptions;
  /** How often to check whether our cells changed, ms. */
  checkMs?: number;
  /** Minimum gap between re-announcements after a cell change, ms: a drifting
   * coordinate must not turn into a storm of provides. */
  minGapMs?: number;
  /** Consecutive checks that must want the same new cells before they are
   * announced (default 3; the first announcement waits for none). */
  stableChecks?: number;
  /** Whether the coordinate is worth announcing yet (enough Vivaldi samples,
   * and a low error estimate or samples that agree with it). */
  ready: () => boolean;
  /** Providers that make a cell dense (a router looks finer): DEFAULT_DENSE_CELL. */
  denseAt?: number;
  /** Longest gap between counts of our finest announced cell, ms (default:
   * half the provider TTL, when kad-dht re-provides anyway). The first count
   * follows the first announcement. */
  densityCheckMs?: number;
  /** Gap after the first count, ms; each later gap doubles up to
   * densityCheckMs, and the schedule starts again when the finest announced
   * cell changes (a move, a level added or dropped). Default: densityCheckMs
   * (every gap the same, as the simulator models it). An early recount (60 s)
   * was tried in session 9 (#18) and is off until a 100-node A/B shows it pays
   * for its GET_PROVIDERS walks; sim/overlay.ts would then model it too. */
  densityFirstGapMs?: number;
  /** Crawlers announced in `cell`, this one included (default: a GET_PROVIDERS
   * lookup through the stack's kad-dht; 1 without one). */
  countProviders?: (cell: Cell) => Promise<number>;
  log?: Logger;
}

export class Announcer {
  private current = new Map<string, Cell>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private busy = false;
  private lastAt = -Infinity;
  /** The changed cells wanted at the last checks, and on how many checks in a row. */
  private pending: { names: string; checks: number } | undefined;
  /** Levels announced, coarsest first (1: the coarsest only). */
  private depth = 1;
  private densityAt = -Infinity;
  /** Counts since the finest announced cell last changed (the gap doubles with each). */
  private countsHere = 0;
  private countedCell: string | undefined;
  private readonly count: (cell: Cell) => Promise<number>;
  /** Provides made (each a DHT walk), and cell counts made to choose the levels. */
  announcements = 0;
  densityChecks = 0;

  constructor(private readonly o: AnnouncerOptions) {
    this.count = o.countProviders ?? defaultCounter(o.libp2p);
  }

  /** How many levels are announced, coarsest first. */
  get levelsAnnounced(): number {
    return this.depth;
  }

  start(): void {
    this.running = true;
    this.schedule(0);
  }

  /** The cells currently announced. */
  cells(): Cell[] {
    return [...this.current.values()];
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      void this.check().finally(() => this.schedule(this.o.checkMs ?? 2_000));
    }, ms);
    this.timer.unref?.();
  }

  /** Announces the cells of the current coordinate, if they changed. */
  async check(): Promise<void> {
    if (this.busy || !this.running) return;
    if (!this.o.ready()) return;
    const c = this.o.coord();
    this.busy = true;
    try {
      const cellOpts = this.o.cells ?? DEFAULT_CELLS;
      // Keep an announced cell while the coordinate stays within a quarter
      // cell of it, so jitter on an edge does not cause re-announcements.
      const all = announceCells(c, cellOpts);
      this.depth = Math.min(this.depth, all.length);
      // Finest first: the coarsest `depth` levels are the last ones.
      const want = all.slice(all.length - this.depth).map((fresh) => {
        const old = [...this.current.values()].find((x) => x.level === fresh.level);
        return old !== undefined && insideWithMargin(c, old, 0.25, cellOpts) ? old : fresh;
      });
      const wantNames = new Set(want.map((x) => x.name));
      const added = want.filter((x) => !this.current.has(x.name));
      const removed = [...this.current.values()].filter((x) => !wantNames.has(x.name));
      if (added.length === 0 && removed.length === 0) {
        this.pending = undefined;
        await this.chooseDepth(want, all.length);
        return;
      }
      // A level added or dropped (chooseDepth) is announced at once, as the
      // first announcement is; a move waits until it is real.
      const announcedLevels = new Set([...this.current.values()].map((x) => x.level));
      const wantLevels = new Set(want.map((x) => x.level));
      const moved = added.some((x) => announcedLevels.has(x.level)) || removed.some((x) => wantLevels.has(x.level));
      if (moved) {
        const names = [...wantNames].sort().join(' ');
        this.pending = this.pending?.names === names ? { names, checks: this.pending.checks + 1 } : { names, checks: 1 };
        if (this.pending.checks < (this.o.stableChecks ?? 3)) return;
        if (performance.now() - this.lastAt < (this.o.minGapMs ?? 30_000)) return;
      }
      this.pending = undefined;
      this.lastAt = performance.now();
      for (const cell of removed) {
        this.current.delete(cell.name);
        await this.cancel(cell.cid);
      }
      // One provide at a time, coarse first: each is a DHT query and
      // coarse cells matter most for finding anyone at all.
      for (const cell of [...added].reverse()) {
        this.current.set(cell.name, cell);
        try {
          await this.o.libp2p.contentRouting.provide(cell.cid, { signal: AbortSignal.timeout(60_000) });
          this.announcements++;
        } catch (err) {
          // The local record exists; kad-dht's re-provider retries the network part.
          this.o.log?.debug({ cell: cell.name, err: String(err) }, 'provide failed');
        }
      }
      this.o.log?.debug({ added: added.map((x) => x.name), removed: removed.length }, 'announced cells');
    } finally {
      this.busy = false;
    }
  }

  /** Counts the crawlers of the finest announced cell when a count is due, and
   * moves one level finer (dense: routers will look there) or coarser (the cell
   * above is sparse again: nobody reads our finest record). The next check
   * provides or withdraws the level at once (no stability wait: not a move). */
  private async chooseDepth(announced: Cell[], levelCount: number): Promise<void> {
    if (announced.length === 0) return;
    const finest = announced[0]!;
    if (finest.name !== this.countedCell) {
      this.countedCell = finest.name;
      this.countsHere = 0;
      // The early-recount schedule starts again in a new cell; without it the pace is
      // unchanged by a move (what the simulator models).
      if (this.o.densityFirstGapMs !== undefined) this.densityAt = -Infinity;
    }
    if (performance.now() - this.densityAt < this.densityGap()) return;
    this.densityAt = performance.now();
    this.countsHere++;
    const dense = this.o.denseAt ?? DEFAULT_DENSE_CELL;
    this.densityChecks++;
    const n = await this.count(finest).catch(() => 0);
    if (announceFiner(n, this.depth, levelCount, dense)) {
      this.depth++;
      this.o.log?.debug({ cell: finest.name, providers: n, levels: this.depth }, 'dense cell: announcing one level finer');
      return;
    }
    if (announced.length < 2) return;
    this.densityChecks++;
    const above = await this.count(announced[1]!).catch(() => Infinity);
    if (dropFinest(above, announced.length, dense)) {
      this.depth--;
      this.o.log?.debug({ cell: announced[1]!.name, providers: above, levels: this.depth }, 'sparse cell: finest level dropped');
    }
  }

  /** The wait before the next count of the same cell: short at first, since a
   * cell fills as its crawlers' coordinates settle and each one announces —
   * counted only every half TTL, a crawler counted its cell sparse right after
   * its own first announcement and stayed out of the finer level, where routers
   * already looked, for up to five minutes (#18: the oracle's crawler missing
   * from the candidates). Doubling, it costs ~3 extra counts (one GET_PROVIDERS
   * walk each) in a crawler's first minutes in a cell, then none. */
  private densityGap(): number {
    const longest = this.o.densityCheckMs ?? providerTiming().thresholdMs;
    const first = this.o.densityFirstGapMs;
    if (first === undefined) return longest;
    if (this.countsHere === 0) return 0;
    return Math.min(longest, first * 2 ** (this.countsHere - 1));
  }

  private async cancel(cid: CID): Promise<void> {
    try {
      await this.o.libp2p.contentRouting.cancelReprovide(cid);
    } catch {
      /* not provided */
    }
  }

  /** Stops re-providing every cell; remote records lapse within one TTL. */
  async withdraw(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    const cells = [...this.current.values()];
    this.current.clear();
    await Promise.all(cells.map((c) => this.cancel(c.cid)));
  }
}

/** Counts a cell's crawlers as a router sees them (cell-lookup.ts: the union
 * of the lists of the first record holders that answer — two, or more while
 * each new one names crawlers the others did not), plus this one. */
function defaultCounter(libp2p: Libp2p): (cell: Cell) => Promise<number> {
  const services = (libp2p as { services?: { dht?: KadDHT } }).services;
  if (services?.dht === undefined) return async () => 1;
  const lookup = new CellLookup({ libp2p: libp2p as Libp2p<{ dht: KadDHT }>, maxStaleMs: 0, maxEntries: 16 });
  return async (cell) => (await lookup.providers(cell)).ids.length + 1;
}
