// The yardsticks of bench:routing: for each host, the best choice a set of
// coordinates allows (argmin of predicted RTT over every online crawler, the
// host placed from the same coordinates), scored against true RTTs. Apart from
// the run because the oracles say how good routing could be, which is the
// question the router's own figures are read against.
import { placeHost, predictRtt, type Coordinate } from '../../src/coords/index.js';
import { createRng, deriveSeed } from '../../src/rng.js';
import type { BenchNet } from './world.js';

export interface Oracle {
  /** RTT(oracle's crawler, host) / RTT(nearest crawler, host), sorted. */
  stretch: number[];
  /** RTT(oracle's crawler, host) − RTT(nearest crawler, host), ms, sorted. */
  extra: number[];
  /** The oracle's crawler (its index among the crawlers) per host. */
  choice: Map<number, number>;
}

/** The best choice the coordinates `coordOf` allow for each host (hosts placed by `hostCoord`), separating coordinate error from lookup misses. */
export function oracleOn(net: BenchNet, hosts: number[], coordOf: (i: number) => Coordinate, hostCoord: (h: number) => Coordinate): Oracle {
  const stretch: number[] = [];
  const extra: number[] = [];
  const choice = new Map<number, number>();
  for (const h of hosts) {
    const hc = hostCoord(h);
    let bi = 0;
    net.index.forEach((_, i) => {
      if (predictRtt(coordOf(i), hc) < predictRtt(coordOf(bi), hc)) bi = i;
    });
    choice.set(h, bi);
    stretch.push(net.rtt(h, net.index[bi]!) / net.nearest(h).rtt);
    extra.push(net.rtt(h, net.index[bi]!) - net.nearest(h).rtt);
  }
  stretch.sort((a, b) => a - b);
  extra.sort((a, b) => a - b);
  return { stretch, extra, choice };
}

/**
 * The same oracle's stretch (sorted) on the offline coordinates, hosts placed
 * from them as the manager would: what routing by coordinates could give with
 * converged ones. Beside the live oracle it says how much the live coordinates
 * blur routing.
 */
export function offlineOracle(net: BenchNet, hosts: number[], offlineCoords: Coordinate[], seed: number): number[] {
  const out: number[] = [];
  for (const h of hosts) {
    const landmarks = net.index.map((d, i) => ({ coord: offlineCoords[d]!, rttMs: net.rtt(h, d), i })).filter((l) => l.rttMs > 0);
    const hc = placeHost(landmarks, {}, createRng(deriveSeed(seed, `offline host${h}`)));
    let bi = 0;
    net.index.forEach((d, i) => {
      if (predictRtt(offlineCoords[d]!, hc) < predictRtt(offlineCoords[net.index[bi]!]!, hc)) bi = i;
    });
    out.push(net.rtt(h, net.index[bi]!) / net.nearest(h).rtt);
  }
  return out.sort((a, b) => a - b);
}
