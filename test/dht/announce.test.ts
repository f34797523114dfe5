// Cell announcements are DHT walks: a move is announced only when it is real.
// The Announcer runs against a recording stand-in for libp2p's content routing
// (what is asserted is which cells it provides, not the DHT).
import { describe, expect, it } from 'vitest';
import type { Libp2p } from '@libp2p/interface';
import type { CID } from 'multiformats/cid';
import { Announcer } from '../../src/dht/announce.js';
import type { Coordinate } from '../../src/coords/index.js';

/** Finest cells are 16 ms wide (DEFAULT_CELLS): x = 0 is a boundary at every level. */
const at = (x: number): Coordinate => ({ vec: Float64Array.from([x, 5, 5]), height: 0, error: 0.1 });

function announcer(coord: () => Coordinate, stableChecks?: number) {
  const provided: string[] = [];
  const cancelled: string[] = [];
  const libp2p = {
    contentRouting: {
      provide: async (cid: CID) => void provided.push(cid.toString()),
      cancelReprovide: async (cid: CID) => void cancelled.push(cid.toString()),
    },
  } as unknown as Libp2p;
  const a = new Announcer({ libp2p, coord, ready: () => true, minGapMs: 0, ...(stableChecks !== undefined ? { stableChecks } : {}) });
  // check() works only while started; start() also schedules checks, which withdraw() ends.
  a.start();
  return { a, provided, cancelled };
}

describe('Announcer', () => {
  it('announces a coordinate jittering across a cell boundary once', async () => {
    // ±6 ms around a boundary: more than the quarter-cell margin (4 ms) of the finest cells.
    let k = 0;
    const { a, provided, cancelled } = announcer(() => at(k++ % 2 === 0 ? -6 : 6));
    for (let i = 0; i < 30; i++) await a.check();
    expect(provided).toHaveLength(4); // one per level, once
    expect(cancelled).toHaveLength(0);
    await a.withdraw();
  });

  it('announces a real move once it has held for stableChecks checks, only the levels that changed', async () => {
    let x = 6;
    const { a, provided, cancelled } = announcer(() => at(x), 3);
    await a.check();
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
});
