// Announces this crawler under the cells of coordinate space it sits in, at
// every level, as short-lived DHT provider records (kad-dht re-provides them at
// half-life while we live; they expire within one TTL after we stop). When the
// coordinate moves to another cell the new cells are provided and the old ones
// no longer re-provided. `withdraw` stops all re-providing.
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
import { announceCells, DEFAULT_CELLS, insideWithMargin, type Cell, type CellOptions } from './cells.js';

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
  announcements = 0;

  constructor(private readonly o: AnnouncerOptions) {}

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
      const want = announceCells(c, cellOpts).map((fresh) => {
        const old = [...this.current.values()].find((x) => x.level === fresh.level);
        return old !== undefined && insideWithMargin(c, old, 0.25, cellOpts) ? old : fresh;
      });
      const wantNames = new Set(want.map((x) => x.name));
      const added = want.filter((x) => !this.current.has(x.name));
      const removed = [...this.current.values()].filter((x) => !wantNames.has(x.name));
      if (added.length === 0 && removed.length === 0) {
        this.pending = undefined;
        return;
      }
      if (this.current.size > 0) {
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
