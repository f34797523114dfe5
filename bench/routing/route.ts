// Routing a batch of orders through a router, `concurrency` in flight, and
// scoring each choice against true RTTs: stretch and extra RTT over the
// nearest online crawler, submit-to-accept latency, how often the choice is
// the nearest or the oracle's, and for coordinate routes the diagnosis of the
// rest (diagnosis.ts), the candidates and levels found, and how long routes
// that waited for the DHT took. Apart from the run so that the measurement
// loop reads on its own.
import { fromWireCoord } from '../../src/dht/peers.js';
import { quantileSorted } from '../../src/coords/index.js';
import { UnlikeOracle, type RoutedBeside, type UnlikeClass } from './diagnosis.js';
import type { Say } from './options.js';
import type { BenchOrder, RouteVia } from './orders.js';
import type { BenchNet } from './world.js';

export async function routeOrders(net: BenchNet, orders: BenchOrder[], hash: boolean, via: RouteVia, concurrency: number, oracleChoice: Map<number, number>, say: Say) {
  const stretch: number[] = [];
  const extra: number[] = [];
  const latency: number[] = [];
  let exact = 0;
  let asOracle = 0;
  let failed = 0;
  const unlike = new UnlikeOracle(net, via);
  let confirmQueries = 0;
  const routed: RoutedBeside[] = [];
  const candidates: number[] = [];
  const levels: Record<string, number> = {};
  const fetchedMs: number[] = [];
  const cachedMs: number[] = [];
  let next = 0;
  const tr = performance.now();
  const progress = setInterval(() => say(`  ${next}/${orders.length} routed in ${((performance.now() - tr) / 1000).toFixed(0)} s`), 30_000);
  const worker = async () => {
    while (next < orders.length) {
      const o = orders[next++]!;
      const t = performance.now();
      const r = await via.router.route(o.envelope, o.order, { hash });
      const ms = performance.now() - t;
      if (r.status !== 'accepted' || r.chosen === undefined) {
        failed++;
        continue;
      }
      latency.push(ms);
      const i = net.nodeOf(r.chosen)!;
      const best = net.nearest(o.h);
      if (i === best.i) exact++;
      const oi = oracleChoice.get(o.h)!;
      let cls: UnlikeClass | undefined;
      if (i === oi) asOracle++;
      else if (!hash) cls = unlike.note(r, r.chosen, o.h, fromWireCoord(o.order.hostCoord!), i, oi);
      if (!hash) routed.push({ stretch: net.rtt(o.h, net.index[i]!) / best.rtt, oracleStretch: net.rtt(o.h, net.index[oi]!) / best.rtt, cls });
      if (!hash) {
        confirmQueries += r.confirmQueries ?? 0;
        candidates.push(r.candidates);
        levels[r.level] = (levels[r.level] ?? 0) + 1;
        ((r.cellsFetched ?? 0) > 0 ? fetchedMs : cachedMs).push(ms);
      }
      stretch.push(net.rtt(o.h, net.index[i]!) / best.rtt);
      extra.push(net.rtt(o.h, net.index[i]!) - best.rtt);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  clearInterval(progress);
  stretch.sort((a, b) => a - b);
  extra.sort((a, b) => a - b);
  latency.sort((a, b) => a - b);
  candidates.sort((a, b) => a - b);
  fetchedMs.sort((a, b) => a - b);
  cachedMs.sort((a, b) => a - b);
  const diagnosis = {
    ...unlike.summary(routed, hash),
    confirmQueriesPerTask: confirmQueries / Math.max(1, latency.length),
    candidatesMedian: quantileSorted(candidates, 0.5),
    candidatesP10: quantileSorted(candidates, 0.1),
    levels,
    routesThatFetched: fetchedMs.length,
    fetchedAcceptP50Ms: quantileSorted(fetchedMs, 0.5),
    fetchedAcceptP99Ms: quantileSorted(fetchedMs, 0.99),
    cachedAcceptP50Ms: quantileSorted(cachedMs, 0.5),
    cachedAcceptP99Ms: quantileSorted(cachedMs, 0.99),
  };
  return { stretch, extra, latency, exact, asOracle, failed, diagnosis };
}
