// The stretch sample's scan by origin must give exactly the full scan's answer:
// the least true RTT over the online crawlers, and the online crawler with the
// least predicted RTT (ties to the lower id).
import { describe, expect, it } from 'vitest';
import { loadDefaultLatency } from '../../src/coords/index.js';
import { createRng } from '../../src/rng.js';
import { OriginIndex } from '../../sim/origin-index.js';
import { buildWorld, hostCrawlerRttFrom, predictedHostCrawler, scenarioConfig, type World } from '../../sim/world.js';

function fullScan(w: World, h: number, online: Uint8Array): { best: number; oracle: number; oracleRtt: number } {
  let best = Infinity;
  let oracle = -1;
  let oracleRtt = Infinity;
  for (let c = 0; c < online.length; c++) {
    if (!online[c]) continue;
    const p = predictedHostCrawler(w, h, c);
    const r = hostCrawlerRttFrom(w, h, c, p);
    if (r < best) best = r;
    if (p < oracleRtt || (p === oracleRtt && c < oracle)) {
      oracleRtt = p;
      oracle = c;
    }
  }
  return { best, oracle, oracleRtt };
}

describe('OriginIndex', () => {
  const world = buildWorld(loadDefaultLatency(), { ...scenarioConfig('ruc', true), hosts: 400 }, 3);
  const C = world.config.crawlers;

  it('finds the full scan’s best crawler and oracle as crawlers leave and join', () => {
    const index = new OriginIndex(world);
    const online = new Uint8Array(C);
    const rng = createRng(7);
    expect(index.scan(0)).toEqual({ best: Infinity, oracle: -1, oracleRtt: Infinity });
    for (let c = 0; c < C; c++) {
      online[c] = 1;
      index.add(c);
    }
    let answered = 0;
    for (let round = 0; round < 4; round++) {
      for (let h = 0; h < world.config.hosts; h++) {
        const want = fullScan(world, h, online);
        const got = { ...index.scan(h) };
        expect(got).toEqual(want);
        if (want.oracle >= 0) answered++;
      }
      // Churn: about a third of the crawlers change state (whole origins empty out too).
      for (let c = 0; c < C; c++) {
        if (rng.next() < 1 / 3) {
          if (online[c]) {
            online[c] = 0;
            index.remove(c);
          } else {
            online[c] = 1;
            index.add(c);
          }
        }
      }
      if (round === 2) {
        for (let c = 0; c < C; c += 2) {
          if (!online[c]) continue;
          online[c] = 0;
          index.remove(c);
        }
      }
    }
    expect(answered).toBeGreaterThan(0);
  });
});
