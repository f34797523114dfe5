// bench:routing — routing quality and latency on the local test network.
//
// Starts N real libp2p volunteers on loopback with the PlanetLab latencies
// imposed on coordinate probes, waits until every crawler has announced its
// cells and the live coordinates have converged, places hosts (dataset nodes
// that are not crawlers) from their RTTs to the live crawlers as the manager
// would, then routes `--tasks` signed orders for random hosts through a
// manager-side router and reports:
//   stretch       RTT(chosen crawler, host) / RTT(best online crawler, host)
//   hashStretch   the same for hash-of-host-name routing (the baseline)
//   extraRtt      RTT(chosen crawler, host) − RTT(best online crawler, host), ms
//                 (stretch explodes for hosts a few ms from a crawler)
//   oracle        the same figures for the best choice the live coordinates
//                 allow (argmin of predicted RTT over every online crawler):
//                 the yardstick, which blurs when the coordinates do. Three
//                 of them, side by side (#18, session 11): on the crawlers'
//                 Vivaldi (system) coordinates, hosts placed from those
//                 (`oracle*`, the yardstick of earlier sessions); on the
//                 coordinates they publish (app-coord.ts), hosts placed from
//                 those as the manager does (`publishedOracle*`: what the
//                 router's inputs allow; a steadier but less accurate
//                 published coordinate shows here, against true RTTs); and
//                 on the offline embedding (`offlineOracle*`)
//   accept        submit-to-accept latency (no delays are imposed on the task
//                 path, so nothing needs subtracting)
// Crawlers run an unlimited no-op runner so load never hides routing choices.
// `--per-process k` runs them in child processes, k to a process (ProcessNet,
// compiled children), so that no single event loop hosts them all; 0 keeps
// them all in this process (TestNet).
//
// The steps live beside this file, one job each, in bench/routing/:
// options.ts (the command line), world.ts (the network and its bill),
// settle.ts (convergence), oracles.ts (the yardsticks), orders.ts (signed
// orders, the --ab-unconfirmed twin), route.ts (the routing loop),
// diagnosis.ts (why a choice is not the oracle's), report.ts (the result).
import { quantileSorted, type Coordinate } from '../src/coords/index.js';
import { fromWireCoord, toWireCoord } from '../src/dht/peers.js';
import { createRng, deriveSeed } from '../src/rng.js';
import { ProcessNet } from '../testbed/net/process-net.js';
import { parseOptions } from './routing/options.js';
import { makeOrders, twinOrders, twinRouter, type RouteVia } from './routing/orders.js';
import { offlineOracle as offlineOracleOf, oracleOn } from './routing/oracles.js';
import { printText, resultOf } from './routing/report.js';
import { routeOrders } from './routing/route.js';
import { settle } from './routing/settle.js';
import { markSettle, startNet } from './routing/world.js';

const { opts, appCoord, say } = parseOptions(process.argv);
const { net, t0, load0, startSeconds } = await startNet(opts, appCoord, say);
const settleBill = markSettle(net, opts.nodes);
const { offlineCoords, offline, convergeSeconds, live, livePublished, tc } = await settle(net, opts, say);
const settledSeconds = (performance.now() - tc) / 1000;
const bill = settleBill();
if (bill.perNodeMinute !== undefined) say(`while settling, per node: ${bill.cpuPctPerNode!.toFixed(2)} % of a core; per minute ${JSON.stringify(bill.perNodeMinute)}`);
say(`live median relative error ${live.toFixed(3)}, of the published coordinates ${livePublished.toFixed(3)} (offline embedding ${offline.toFixed(3)}) after ${settledSeconds.toFixed(0)} s${convergeSeconds === null ? ' (not converged)' : ` (converged in ${convergeSeconds.toFixed(0)} s)`}`);

// Place the hosts from the coordinates the crawlers publish, as the manager
// does (their uploads carry those), and from their system coordinates for
// the earlier yardstick.
const rng = createRng(deriveSeed(opts.seed, 'tasks'));
const hosts = net.hosts.filter((h) => net.nearest(h).rtt < Infinity);
const sysCoord = (i: number) => net.coord(i);
const pubCoord = (i: number) => net.published(i);
const placed = new Map<number, ReturnType<typeof toWireCoord>>();
for (const h of hosts) placed.set(h, toWireCoord(net.placeHost(h, undefined, pubCoord)));

const sysOracle = oracleOn(net, hosts, sysCoord, (h) => net.placeHost(h, undefined, sysCoord));
const pubOracle = oracleOn(net, hosts, pubCoord, (h) => fromWireCoord(placed.get(h)!));
// The router ranks published coordinates: the choice it is compared with.
const oracleChoice = pubOracle.choice;
const offlineOracle = offlineOracleOf(net, hosts, offlineCoords, opts.seed);

const before = net.index.map((_, i) => Float64Array.from(net.coord(i).vec)); // a copy: TestNet's are live
const beforePub = net.index.map((_, i) => Float64Array.from(net.published(i).vec));
const changesBefore = net.index.map((_, i) => net.publishedChanges(i));
const coordOrders = await makeOrders(net, hosts, placed, rng, opts.tasks, true, 'c');
const hashOrders = await makeOrders(net, hosts, placed, rng, opts.hashTasks, false, 'x');
const tr = performance.now();
// --ab-unconfirmed: each router gets half the concurrency, so the network carries the usual load.
const twin = opts.abUnconfirmed ? twinRouter(net, opts.seed) : undefined;
const twins = twin !== undefined ? await twinOrders(net, coordOrders) : [];
const manager: RouteVia = { router: net.manager.router, peers: net.manager.peers };
const half = Math.max(1, Math.floor(opts.concurrency / 2));
const [byCoord, unconfirmed] = await Promise.all([
  routeOrders(net, coordOrders, false, manager, twin !== undefined ? half : opts.concurrency, oracleChoice, say),
  twin !== undefined ? routeOrders(net, twins, false, twin, half, oracleChoice, say) : Promise.resolve(undefined),
]);
say(`routed ${opts.tasks} tasks by coordinate in ${((performance.now() - tr) / 1000).toFixed(1)} s (${byCoord.failed} failed)`);
say(`  stretch median ${quantileSorted(byCoord.stretch, 0.5).toFixed(3)} p90 ${quantileSorted(byCoord.stretch, 0.9).toFixed(3)}, accept p50 ${quantileSorted(byCoord.latency, 0.5).toFixed(1)} ms p99 ${quantileSorted(byCoord.latency, 0.99).toFixed(1)} ms`);
const byHash = await routeOrders(net, hashOrders, true, manager, opts.concurrency, oracleChoice, say);
say(`routed ${opts.hashTasks} tasks by hash (${byHash.failed} failed)`);
await net.refresh();
// How far the crawlers' own coordinates moved while the tasks were routed: the
// oracle reads them as they were before routing, a router that confirms its
// copies reads them as they are, so this is how far the two can disagree
// without either being wrong.
const motionOf = (coordOf: (i: number) => Coordinate, from: Float64Array[]) => net.index.map((_, i) => Math.hypot(...Array.from(coordOf(i).vec, (x, a) => x - (from[i]![a] ?? 0)))).sort((a, b) => a - b);
const usage = net instanceof ProcessNet ? net.usage() : undefined;
const result = resultOf({
  opts,
  appCoord,
  usage,
  convergeSeconds,
  settledSeconds,
  live,
  livePublished,
  offline,
  startSeconds,
  sysOracle,
  pubOracle,
  offlineOracle,
  byCoord,
  byHash,
  unconfirmed,
  motion: motionOf(sysCoord, before),
  motionPub: motionOf(pubCoord, beforePub),
  changesWhileRouting: net.index.map((_, i) => net.publishedChanges(i) - changesBefore[i]!).sort((a, b) => a - b),
  routerConfirmQueries: net.manager.router.confirmQueries,
  // Peak resident memory of every process that hosts nodes (maxRSS is in KiB).
  peakRssSumMB: process.resourceUsage().maxRSS / 1024 + (usage?.peakRssSumMB ?? 0),
  bill,
  load0,
  t0,
});
if (opts.json) console.log(JSON.stringify(result));
else printText(result);
await net.stop();
process.exit(0);
