// Cell announcements are DHT walks: a move is announced only when it is real.
// The Announcer runs against a recording stand-in for libp2p's content routing
// (what is asserted is which cells it provides, not the DHT).
import { describe, expect, it } from 'vitest';
import type { Libp2p } from '@libp2p/interface';
import type { CID } from 'multiformats/cid';
import { Announcer } from '../../src/dht/announce.js';
import { cellAt, type Cell } from '../../src/dht/cells.js';
import type { Coordinate } from '../../src/coords/index.js';

/** Finest cells are 16 ms wide (DEFAULT_CELLS): x = 0 is a boundary at every level. */
const at = (x: number): Coordinate => ({ vec: Float64Array.from([x, 5, 5]), height: 0, error: 0.1 });

/** `crawlers(cell)`: how many crawlers the DHT says are announced in a cell
 * (default: every cell dense, so every level is announced). */
function announcer(coord: () => Coordinate, stableChecks?: number, crawlers: (cell: Cell) => number = () => 100) {
  const provided: string[] = [];
  const cancelled: string[] = [];
  const counted: number[] = [];
  const libp2p = {
    contentRouting: {
      provide: async (cid: CID) => void provided.push(cid.toString()),
      cancelReprovide: async (cid: CID) => void cancelled.push(cid.toString()),
    },
  } as unknown as Libp2p;
  const countProviders = async (cell: Cell) => {
    counted.push(cell.level);
    return crawlers(cell);
  };
  const a = new Announcer({ libp2p, coord, ready: () => true, minGapMs: 0, densityCheckMs: 0, countProviders, ...(stableChecks !== undefined ? { stableChecks } : {}) });
  // check() works only while started; start() also schedules checks, which withdraw() ends.
  a.start();
  return { a, provided, cancelled, counted };
}

/** Checks until the announcer stops changing what it provides and how deep. */
async function settle(a: Announcer, checks = 40): Promise<void> {
  for (let i = 0; i < checks; i++) await a.check();
}

describe('Announcer', () => {
  it('announces a coordinate jittering across a cell boundary once', async () => {
    // ±6 ms around a boundary: more than the quarter-cell margin (4 ms) of the finest cells.
    let k = 0;
    const { a, provided, cancelled } = announcer(() => at(k++ % 2 === 0 ? -6 : 6));
    await settle(a);
    expect(a.levelsAnnounced).toBe(4);
    expect(provided).toHaveLength(4); // one per level, once
    expect(cancelled).toHaveLength(0);
    await a.withdraw();
  });

  it('announces a real move once it has held for stableChecks checks, only the levels that changed', async () => {
    let x = 6;
    const { a, provided, cancelled } = announcer(() => at(x), 3);
    await settle(a);
    expect(provided).toHaveLength(4);
    x = 40; // two finest cells on: the 16 ms level changes, the coarser ones (64 ms and up) do not
    await a.check();
    await a.check();
    expect(provided).toHaveLength(4);
    await a.check();
    expect(provided).toHaveLength(5);
    expect(cancelled).toHaveLength(1);
    for (let i = 0; i < 10; i++) await a.check();
    expect(provided).toHaveLength(5);
    await a.withdraw();
  });

  it('announces only the coarsest level while the cells are sparse, and counts at most once per density period', async () => {
    const { a, provided, counted } = announcer(() => at(6), 1, () => 5);
    await settle(a);
    expect(provided).toHaveLength(1);
    expect(a.levelsAnnounced).toBe(1);
    expect(provided[0]).toBe(cellAt(at(6), 2).cid.toString());
    expect(new Set(counted)).toEqual(new Set([2]));
    await a.withdraw();

    const slow = announcer(() => at(6), 1, () => 5);
    const b = new Announcer({ libp2p: { contentRouting: { provide: async () => undefined, cancelReprovide: async () => undefined } } as unknown as Libp2p, coord: () => at(6), ready: () => true, minGapMs: 0, densityCheckMs: 3_600_000, countProviders: async () => (slow.counted.push(0), 5) });
    b.start();
    await settle(b);
    expect(slow.counted).toHaveLength(1); // right after the first announcement, then not for an hour
    await b.withdraw();
    await slow.a.withdraw();
  });

  it('counts again soon after the first count: a cell that turns dense as its crawlers settle is joined within the short gap, not half a TTL later', async () => {
    let crowd = 5;
    const counted: number[] = [];
    const libp2p = { contentRouting: { provide: async () => undefined, cancelReprovide: async () => undefined } } as unknown as Libp2p;
    const a = new Announcer({ libp2p, coord: () => at(6), ready: () => true, minGapMs: 0, densityCheckMs: 3_600_000, densityFirstGapMs: 5, countProviders: async (cell) => (counted.push(cell.level), crowd) });
    a.start();
    await settle(a, 3);
    expect(counted).toEqual([2]); // right after the first announcement: sparse
    crowd = 70; // the others announced meanwhile
    for (let i = 0; i < 500 && a.levelsAnnounced < 2; i++) {
      await new Promise((r) => setTimeout(r, 5));
      await a.check();
    }
    expect(a.levelsAnnounced).toBe(2);
    expect(counted.slice(0, 2)).toEqual([2, 2]);
    await a.withdraw();
  });

  it('goes one level finer where the cell is dense, and back when the cell above thins out', async () => {
    // Dense down to level 4 (its cells hold 70 ≥ 64), sparse below.
    let crowd = (cell: Cell): number => (cell.level <= 4 ? 70 : 3);
    const { a, provided, cancelled } = announcer(() => at(6), 1, (cell) => crowd(cell));
    await settle(a);
    expect(a.levelsAnnounced).toBe(3); // levels 2, 4 and 6: a router descends into 4's dense cell and finds 6's
    expect(provided).toEqual([2, 4, 6].map((l) => cellAt(at(6), l).cid.toString()));
    expect(cancelled).toHaveLength(0);
    crowd = (cell) => (cell.level <= 2 ? 70 : 20); // level 4's cell is below 64 / 2: nobody reads level 6
    await settle(a);
    expect(a.levelsAnnounced).toBe(2);
    expect(cancelled).toEqual([cellAt(at(6), 6).cid.toString()]);
    expect(provided).toHaveLength(3);
    await a.withdraw();
  });
});
