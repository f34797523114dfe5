// Why a coordinate route's choice differs from the oracle's (#18): the
// oracle's crawler was not among the candidates (the cell search missed it),
// or it was but ranked lower (the router's view of coordinates is stale, or
// the placement policy put it lower), or the order went on after a refusal.
// Apart from the routing loop because the classification is the bench's
// diagnosis of the router, read against the network's state, not a figure.
import { predictRtt, quantileSorted, type Coordinate } from '../../src/coords/index.js';
import { blockAround, cellAt, DEFAULT_CELLS } from '../../src/dht/cells.js';
import type { RouteResult } from '../../src/dht/router.js';
import type { RouteVia } from './orders.js';
import type { BenchNet } from './world.js';

// The same split, finer (#18): a miss whose crawler has not announced yet
// (at the last refresh, before routing), one whose crawler lies outside the block of
// the finest level found (the search's geometry) or inside it yet absent
// from the providers (a partial list, or not announced at that level); a
// candidate ranked lower because the manager's copy of the coordinates puts
// the chosen one nearer (its copy is older than the live one the oracle
// reads) or because the placement policy's load/spill order put it lower.
// Per class: routes, the RTT given up (chosen − oracle's crawler, ms, summed)
// and the stretch p90 had those routes gone to the oracle's crawler.
export const UNLIKE_CLASSES = ['missedNotAnnounced', 'missedOutsideBlock', 'missedInBlock', 'rankedLowerByManagerCoords', 'rankedLowerByPolicy', 'retried'] as const;
export type UnlikeClass = (typeof UNLIKE_CLASSES)[number];

/** One coordinate route's stretch beside the oracle's, with its class when the choices differ. */
export interface RoutedBeside {
  stretch: number;
  oracleStretch: number;
  cls?: UnlikeClass | undefined;
}

/** The tally of one run's routes that went elsewhere than the oracle's crawler. */
export class UnlikeOracle {
  private readonly why = { missed: 0, staleRank: 0, retried: 0 };
  // missedInBlock, split by why (#18, session 10): the router's cached answers
  // for the block's cells name the oracle's crawler (so the router dropped it:
  // marked down, refused by the overlay check, or left out of a sample), or
  // none does (the holders' lists lack it: partial lists, or its announced cell
  // at that level is not the one its current coordinate lies in).
  // An unlisted one is split again by the cells it had announced at the last
  // refresh: none in the block (its announced cell lags its coordinate: the
  // announcer keeps a cell while the coordinate stays within a quarter cell of
  // it) or one in the block whose holders did not name it (a partial list, or
  // a cached answer from before it announced there).
  private readonly inBlock = { listedButDown: 0, listedOther: 0, unlistedAnnouncedElsewhere: 0, unlistedAnnouncedInBlock: 0 };
  private readonly byClass = new Map<UnlikeClass, { routes: number; extraMs: number }>(UNLIKE_CLASSES.map((c) => [c, { routes: 0, extraMs: 0 }]));
  /** How far the manager's copies lie from the published coordinates the oracle read (ms in coordinate space). */
  private readonly coordDriftMs: number[] = [];

  constructor(
    private readonly net: BenchNet,
    private readonly via: RouteVia,
  ) {}

  /** Classifies a route to crawler `i` (peer id `chosen`) for host `h` at `hc` where the oracle chose `oi`, and counts the RTT given up. */
  note(r: RouteResult, chosen: string, h: number, hc: Coordinate, i: number, oi: number): UnlikeClass {
    const { net, via } = this;
    const table = via.peers;
    const oid = net.peerIdOf(oi);
    let cls: UnlikeClass;
    if (r.attempts > 1) {
      this.why.retried++;
      cls = 'retried';
    } else if (r.ranked === undefined || !r.ranked.includes(oid)) {
      this.why.missed++;
      const level = r.level >= 0 ? r.level : DEFAULT_CELLS.minLevel;
      const own = cellAt(net.published(oi), level).name;
      const block = blockAround(hc, level);
      if (net.announcements(oi) === 0) cls = 'missedNotAnnounced';
      else cls = block.some((c) => c.name === own) ? 'missedInBlock' : 'missedOutsideBlock';
      if (cls === 'missedInBlock') {
        if (!block.some((c) => via.router.cellLookup.peek(c)?.ids.includes(oid) === true)) {
          const announced = new Set(net.announcedCells(oi));
          if (block.some((c) => announced.has(c.name))) this.inBlock.unlistedAnnouncedInBlock++;
          else this.inBlock.unlistedAnnouncedElsewhere++;
        }
        else if (table.get(oid)?.down === true) this.inBlock.listedButDown++;
        else this.inBlock.listedOther++;
      }
    } else {
      this.why.staleRank++;
      const mine = table.get(chosen)?.coord;
      const theirs = table.get(oid)?.coord;
      cls = mine !== undefined && theirs !== undefined && predictRtt(theirs, hc) >= predictRtt(mine, hc) ? 'rankedLowerByManagerCoords' : 'rankedLowerByPolicy';
      for (const [copy, j] of [[mine, i], [theirs, oi]] as const) {
        if (copy !== undefined) this.coordDriftMs.push(Math.hypot(...Array.from(copy.vec, (x, a) => x - (net.published(j).vec[a] ?? 0))));
      }
    }
    const c = this.byClass.get(cls)!;
    c.routes++;
    c.extraMs += net.rtt(h, net.index[i]!) - net.rtt(h, net.index[oi]!);
    return cls;
  }

  /** The tally, per class with the stretch p90 had that class's routes gone to the oracle's crawler (undefined for hash routing). */
  summary(routed: RoutedBeside[], hash: boolean) {
    const p90If = (fixed: UnlikeClass) => quantileSorted(routed.map((x) => (x.cls === fixed ? x.oracleStretch : x.stretch)).sort((a, b) => a - b), 0.9);
    this.coordDriftMs.sort((a, b) => a - b);
    return {
      ...this.why,
      unlikeOracle: Object.fromEntries(UNLIKE_CLASSES.map((c) => [c, { routes: this.byClass.get(c)!.routes, extraMsSum: Math.round(this.byClass.get(c)!.extraMs), stretchP90IfOracle: hash ? undefined : p90If(c) }])),
      managerCopyDriftMsMedian: quantileSorted(this.coordDriftMs, 0.5),
      missedInBlockWhy: this.inBlock,
    };
  }
}
