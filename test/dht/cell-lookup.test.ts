// A cell's lookup hears record holders until their lists agree: while routing
// tables fill, holders can each store part of a cell's providers (#18).
// kad-dht's findProviders stands in as a scripted stream of holder answers.
import { describe, expect, it } from 'vitest';
import { CellLookup } from '../../src/dht/cell-lookup.js';
import { cellAt } from '../../src/dht/cells.js';

function lookupOver(holders: string[][], maxResponders?: number) {
  let answered = 0;
  const libp2p = {
    peerId: { toString: () => 'me' },
    services: {
      dht: {
        async *findProviders() {
          for (const [h, list] of holders.entries()) {
            answered = h + 1;
            yield { name: 'PEER_RESPONSE', from: { toString: () => `holder-${h}` }, providers: list.map((id) => ({ id: { toString: () => id }, multiaddrs: [] })), closer: [] };
          }
        },
      },
    },
  };
  return { lookup: new CellLookup({ libp2p: libp2p as never, ...(maxResponders !== undefined ? { maxResponders } : {}) }), answered: () => answered };
}

const cell = cellAt({ vec: [0, 0, 0] }, 2);

describe('CellLookup', () => {
  it('goes on past two holders while each names crawlers the others did not, and stops at the first that adds nobody', async () => {
    const { lookup, answered } = lookupOver([['a', 'b'], ['c'], ['d'], ['a', 'b', 'c', 'd'], ['e']], 6);
    const r = await lookup.providers(cell);
    expect(r.ids.sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(r.complete).toBe(true);
    expect(answered()).toBe(4); // the fifth holder was never waited for
  });

  it('by default stops after two holders with a list, whatever a third would add', async () => {
    const { lookup, answered } = lookupOver([['a', 'b'], ['c'], ['d']]);
    expect((await lookup.providers(cell)).ids.sort()).toEqual(['a', 'b', 'c']);
    expect(answered()).toBe(2);
  });

  it('stops after two holders that agree, and after maxResponders whatever they say', async () => {
    const agree = lookupOver([['a', 'b'], ['b', 'a'], ['c']], 6);
    expect((await agree.lookup.providers(cell)).ids.sort()).toEqual(['a', 'b']);
    expect(agree.answered()).toBe(2);
    const capped = lookupOver([['a'], ['b'], ['c'], ['d']], 3);
    expect((await capped.lookup.providers(cell)).ids.sort()).toEqual(['a', 'b', 'c']);
    expect(capped.answered()).toBe(3);
  });
});
