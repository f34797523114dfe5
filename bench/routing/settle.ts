// Waiting for the live coordinates to settle before anything is routed: the
// yardstick is Vivaldi run offline on the same RTT matrix among the same
// crawlers (what the live coordinates could reach with exact RTTs and
// unlimited rounds); the wait ends when the live error is within 1.5× of it
// with every crawler announced, or at --settle. Apart from the run because
// convergence is its own measurement (convergeSeconds, the live errors).
import { embedMatrix, embeddingError, type Coordinate } from '../../src/coords/index.js';
import { waitFor } from '../../testbed/net/harness.js';
import type { Say } from './options.js';
import { lagNote, type BenchNet } from './world.js';

/** The median relative error of the crawlers' coordinates (`coordOf`, their Vivaldi ones by default) against the RTT matrix. */
export function liveError(net: BenchNet, coordOf: (i: number) => Coordinate = (i) => net.coord(i)): number {
  const coords: Coordinate[] = Array.from({ length: net.matrix.n }, () => coordOf(0));
  net.index.forEach((d, i) => (coords[d] = coordOf(i)));
  return embeddingError(coords, net.matrix, net.index).median;
}

export interface Settled {
  /** The offline embedding, by dataset node. */
  offlineCoords: Coordinate[];
  offline: number;
  /** Seconds until the live error came within 1.5× the offline one with every crawler announced; null if it never did. */
  convergeSeconds: number | null;
  live: number;
  livePublished: number;
  /** When the wait began (performance.now()). */
  tc: number;
}

export async function settle(net: BenchNet, opts: { seed: number; settle: number; nodes: number }, say: Say): Promise<Settled> {
  const offlineCoords = embedMatrix(net.matrix, { nodes: net.index, seed: opts.seed, rounds: 2000 });
  const offline = embeddingError(offlineCoords, net.matrix, net.index).median;
  const tc = performance.now();
  let convergeSeconds: number | null = null;
  let checks = 0;
  try {
    await waitFor(
      async () => {
        await net.refresh();
        const err = liveError(net);
        const announced = net.index.filter((_, i) => net.announcements(i) > 0).length;
        if (++checks % 15 === 0) say(`  ${((performance.now() - tc) / 1000).toFixed(0)} s: live error ${err.toFixed(3)}, ${announced}/${opts.nodes} announced${lagNote(net)}`);
        const ok = err <= 1.5 * offline && announced === opts.nodes;
        if (ok) convergeSeconds = (performance.now() - tc) / 1000;
        return ok;
      },
      opts.settle * 1000,
      'convergence',
      2000,
    );
  } catch {
    say(`coordinates did not reach 1.5x the offline error within ${opts.settle} s (now ${liveError(net).toFixed(3)}): not converged (convergeSeconds null); routing measured anyway, against both oracles`);
  }
  // Let the last cell moves settle in the DHT.
  await new Promise((r) => setTimeout(r, 5000));
  await net.refresh();
  return { offlineCoords, offline, convergeSeconds, live: liveError(net), livePublished: liveError(net, (i) => net.published(i)), tc };
}
