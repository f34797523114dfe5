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
import { loadavg } from 'node:os';
import { Command } from 'commander';
import { appCoordOptions, embedMatrix, embeddingError, placeHost, predictRtt, quantileSorted, type AppCoordOptions, type Coordinate } from '../src/coords/index.js';
import { fromWireCoord } from '../src/dht/peers.js';
import { createRng, deriveSeed } from '../src/rng.js';
import { toWireCoord } from '../src/dht/peers.js';
import { signOrder, type TaskOrder, type SignedEnvelope } from '../src/dht/signing.js';
import { UPLOAD_PROTOCOL } from '../src/dht/upload.js';
import { DEFAULT_PROVIDER_TTL_MS } from '../src/dht/announce.js';
import { blockAround, cellAt, DEFAULT_CELLS } from '../src/dht/cells.js';
import { PeerTable } from '../src/dht/peers.js';
import { CoordService } from '../src/dht/coord-protocol.js';
import { Router } from '../src/dht/router.js';
import { TestNet, waitFor } from '../testbed/net/harness.js';
import { ProcessNet } from '../testbed/net/process-net.js';

const program = new Command('bench:routing')
  .option('--nodes <n>', 'crawlers on the local network', (v) => parseInt(v, 10), 100)
  .option('--tasks <n>', 'tasks routed by coordinate', (v) => parseInt(v, 10), 2_000)
  .option('--hash-tasks <n>', 'tasks routed by host-name hash', (v) => parseInt(v, 10), 200)
  .option('--concurrency <n>', 'orders in flight at once', (v) => parseInt(v, 10), 4)
  .option('--settle <s>', 'longest wait for coordinates to converge, seconds', (v) => parseInt(v, 10), 300)
  .option('--coord-interval <ms>', 'shortest coordinate probing interval (while coordinates settle)', (v) => parseInt(v, 10), 1000)
  .option('--per-process <k>', 'crawlers per child process (0: all in this process)', (v) => parseInt(v, 10), 10)
  .option('--start-concurrency <n>', 'child processes starting their nodes at once', (v) => parseInt(v, 10), 4)
  .option('--seed <n>', 'seed', (v) => parseInt(v, 10), 1)
  .option('--confirm-top <n>', "the manager's router confirms this many top candidates' coordinates before committing (default: the Router's)", (v) => parseInt(v, 10))
  .option('--ab-unconfirmed', "route a twin of every coordinate order, at the same time, through a second router that ranks on its copies as they are (confirmTop 0: the router before session 10) and report its figures beside ours (key unconfirmed)", false)
  .option('--app-coord', "crawlers publish an application-level coordinate (src/coords/app-coord.ts; off by default, as in the node: they publish their Vivaldi coordinate as it is)", false)
  .option('--app-window <n>', "samples per window of the published coordinate's change test (default: app-coord.ts's)", (v) => parseInt(v, 10))
  .option('--app-threshold <ms>', "energy distance that counts as a move of the published coordinate, ms (default: app-coord.ts's)", (v) => parseFloat(v))
  .option('--json', 'print one JSON object', false)
  .parse(process.argv);
const opts = program.opts<{ appCoord: boolean; appWindow?: number; appThreshold?: number; confirmTop?: number; abUnconfirmed: boolean; nodes: number; tasks: number; hashTasks: number; concurrency: number; settle: number; coordInterval: number; perProcess: number; startConcurrency: number; seed: number; json: boolean }>();
for (const [k, v] of Object.entries({ nodes: opts.nodes, tasks: opts.tasks, 'hash-tasks': opts.hashTasks, concurrency: opts.concurrency, settle: opts.settle, 'coord-interval': opts.coordInterval, 'per-process': opts.perProcess, 'start-concurrency': opts.startConcurrency })) {
  const min = k === 'per-process' || k === 'tasks' || k === 'hash-tasks' ? 0 : 1;
  if (!Number.isInteger(v) || v < min) {
    console.error(`bench:routing: --${k} must be an integer ≥ ${min}`);
    process.exit(2);
  }
}
if (opts.confirmTop !== undefined && !(Number.isInteger(opts.confirmTop) && opts.confirmTop >= 0)) {
  console.error('bench:routing: --confirm-top must be an integer ≥ 0');
  process.exit(2);
}
let appCoord: AppCoordOptions;
try {
  appCoord = appCoordOptions({ enabled: opts.appCoord, ...(opts.appWindow !== undefined ? { windowSize: opts.appWindow } : {}), ...(opts.appThreshold !== undefined ? { thresholdMs: opts.appThreshold } : {}) });
} catch (err) {
  console.error(`bench:routing: ${(err as Error).message}`);
  process.exit(2);
}
if (opts.nodes < 2) {
  console.error('bench:routing: --nodes must be at least 2');
  process.exit(2);
}
const say = (s: string) => {
  if (!opts.json) console.log(s);
  else process.stderr.write(`${s}\n`);
};

const netOptions = {
  nodes: opts.nodes,
  seed: opts.seed,
  runner: { unlimited: true },
  coordIntervalMs: opts.coordInterval,
  coordFanout: 2,
  appCoord,
  routerCacheTtlMs: 60_000,
  taskRateLimit: { perSecond: 100_000, burst: 100_000 },
  // The product's provider-record lifetime (the test network's default is
  // shorter, for tests of departures): re-provides are most of the DHT's bill.
  providerTtlMs: DEFAULT_PROVIDER_TTL_MS,
  ...(opts.confirmTop !== undefined ? { routerConfirmTop: opts.confirmTop } : {}),
};
const t0 = performance.now();
let lastJoinNote = 0;
const onJoined = (joined: number, total: number) => {
  const now = performance.now();
  if (joined === total || now - lastJoinNote >= 15_000) {
    lastJoinNote = now;
    say(`  ${joined}/${total} nodes joined in ${((now - t0) / 1000).toFixed(0)} s (load ${loadavg()[0]!.toFixed(1)})`);
  }
};
const net = opts.perProcess > 0 ? new ProcessNet({ ...netOptions, perProcess: opts.perProcess, startConcurrency: opts.startConcurrency, onJoined }) : new TestNet(netOptions);
// The children's event-loop lag: queueing that inflates the probes they answer.
const lagNote = () => {
  if (!(net instanceof ProcessNet)) return '';
  const u = net.usage();
  const lag = u.lagP99Ms.sort((x, y) => x - y);
  return `, loop lag p99 ${quantileSorted(lag, 0.5).toFixed(0)} ms (worst process ${lag[lag.length - 1]!.toFixed(0)} ms), children's CPU ${u.cpuSeconds.toFixed(0)} s`;
};
const load0 = loadavg()[0]!;
try {
  await net.start();
} catch (err) {
  console.error(`bench:routing: the network did not start after ${((performance.now() - t0) / 1000).toFixed(0)} s (load average ${loadavg()[0]!.toFixed(1)}): ${(err as Error).message}`);
  await net.stop().catch(() => undefined);
  process.exit(1);
}
const startSeconds = (performance.now() - t0) / 1000;
say(`started ${opts.nodes} nodes (${opts.perProcess > 0 ? `${opts.perProcess} per child process` : 'all in this process'}) in ${startSeconds.toFixed(1)} s${lagNote()}`);

// The children's CPU and activity while the coordinates settle (no tasks yet):
// the bill of an idle-ish network, per node (activity.ts).
const settleMark = { at: performance.now(), usage: net instanceof ProcessNet ? net.usage() : undefined };
function settleBill(): { cpuPctPerNode?: number; perNodeMinute?: Record<string, number> } {
  if (!(net instanceof ProcessNet) || settleMark.usage === undefined) return {};
  const u = net.usage();
  const minutes = (performance.now() - settleMark.at) / 60_000;
  const perNodeMinute: Record<string, number> = {};
  for (const [k, v] of Object.entries(u.activity)) {
    if (k.startsWith('now: ')) {
      perNodeMinute[k] = Number((v / opts.nodes).toFixed(2));
      continue;
    }
    const d = (v - (settleMark.usage.activity[k] ?? 0)) / opts.nodes / Math.max(1e-9, minutes);
    if (d > 0) perNodeMinute[k] = Number(d.toFixed(2));
  }
  return { cpuPctPerNode: (100 * (u.cpuSeconds - settleMark.usage.cpuSeconds)) / (minutes * 60) / opts.nodes, perNodeMinute };
}

function liveError(coordOf: (i: number) => Coordinate = (i) => net.coord(i)): number {
  const coords: Coordinate[] = Array.from({ length: net.matrix.n }, () => coordOf(0));
  net.index.forEach((d, i) => (coords[d] = coordOf(i)));
  return embeddingError(coords, net.matrix, net.index).median;
}
// The yardstick for convergence: Vivaldi run offline on the same RTT matrix
// among the same crawlers (what the live coordinates could reach with exact
// RTTs and unlimited rounds).
const offlineCoords = embedMatrix(net.matrix, { nodes: net.index, seed: opts.seed, rounds: 2000 });
const offline = embeddingError(offlineCoords, net.matrix, net.index).median;
const tc = performance.now();
/** Seconds until the live error came within 1.5× the offline one with every crawler announced; null if it never did. */
let convergeSeconds: number | null = null;
let checks = 0;
try {
  await waitFor(
    async () => {
      await net.refresh();
      const err = liveError();
      const announced = net.index.filter((_, i) => net.announcements(i) > 0).length;
      if (++checks % 15 === 0) say(`  ${((performance.now() - tc) / 1000).toFixed(0)} s: live error ${err.toFixed(3)}, ${announced}/${opts.nodes} announced${lagNote()}`);
      const ok = err <= 1.5 * offline && announced === opts.nodes;
      if (ok) convergeSeconds = (performance.now() - tc) / 1000;
      return ok;
    },
    opts.settle * 1000,
    'convergence',
    2000,
  );
} catch {
  say(`coordinates did not reach 1.5x the offline error within ${opts.settle} s (now ${liveError().toFixed(3)}): not converged (convergeSeconds null); routing measured anyway, against both oracles`);
}
// Let the last cell moves settle in the DHT.
await new Promise((r) => setTimeout(r, 5000));
await net.refresh();
const live = liveError();
const livePublished = liveError((i) => net.published(i));
const bill = settleBill();
if (bill.perNodeMinute !== undefined) say(`while settling, per node: ${bill.cpuPctPerNode!.toFixed(2)} % of a core; per minute ${JSON.stringify(bill.perNodeMinute)}`);
const settledSeconds = (performance.now() - tc) / 1000;
say(`live median relative error ${live.toFixed(3)}, of the published coordinates ${livePublished.toFixed(3)} (offline embedding ${offline.toFixed(3)}) after ${settledSeconds.toFixed(0)} s${convergeSeconds === null ? ' (not converged)' : ` (converged in ${(convergeSeconds as number).toFixed(0)} s)`}`);

// Place the hosts from the coordinates the crawlers publish, as the manager
// does (their uploads carry those), and from their system coordinates for
// the earlier yardstick.
const rng = createRng(deriveSeed(opts.seed, 'tasks'));
const hosts = net.hosts.filter((h) => net.nearest(h).rtt < Infinity);
const sysCoord = (i: number) => net.coord(i);
const pubCoord = (i: number) => net.published(i);
const placed = new Map<number, ReturnType<typeof toWireCoord>>();
for (const h of hosts) placed.set(h, toWireCoord(net.placeHost(h, undefined, pubCoord)));

/** The best choice the coordinates `coordOf` allow for each host (argmin of
 * predicted RTT over every online crawler, hosts placed from the same
 * coordinates), separating coordinate error from lookup misses. */
function oracleOn(coordOf: (i: number) => Coordinate, hostCoord: (h: number) => Coordinate) {
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
const sysOracle = oracleOn(sysCoord, (h) => net.placeHost(h, undefined, sysCoord));
const pubOracle = oracleOn(pubCoord, (h) => fromWireCoord(placed.get(h)!));
const oracle = sysOracle.stretch;
const oracleExtra = sysOracle.extra;
// The router ranks published coordinates: the choice it is compared with.
const oracleChoice = pubOracle.choice;
// The same oracle on the offline coordinates (hosts placed from them as the
// manager would): what routing by coordinates could give with converged ones.
// Beside the live oracle it says how much the live coordinates blur routing.
const offlineOracle: number[] = [];
for (const h of hosts) {
  const landmarks = net.index.map((d, i) => ({ coord: offlineCoords[d]!, rttMs: net.rtt(h, d), i })).filter((l) => l.rttMs > 0);
  const hc = placeHost(landmarks, {}, createRng(deriveSeed(opts.seed, `offline host${h}`)));
  let bi = 0;
  net.index.forEach((d, i) => {
    if (predictRtt(offlineCoords[d]!, hc) < predictRtt(offlineCoords[net.index[bi]!]!, hc)) bi = i;
  });
  offlineOracle.push(net.rtt(h, net.index[bi]!) / net.nearest(h).rtt);
}
offlineOracle.sort((a, b) => a - b);

async function makeOrders(n: number, withCoord: boolean, tag: string): Promise<{ h: number; order: TaskOrder; envelope: SignedEnvelope }[]> {
  const out = [];
  for (let k = 0; k < n; k++) {
    const h = hosts[Math.floor(rng.next() * hosts.length)]!;
    const task = net.makeTask(h, `${tag}${k}-${h}`);
    const order: TaskOrder = {
      v: 1,
      id: String(task.id),
      issuer: net.manager.id,
      issuedAt: Date.now(),
      expiresAt: Date.now() + 6 * 3_600_000,
      host: net.hostName(h),
      ...(withCoord ? { hostCoord: placed.get(h)! } : {}),
      storage: { peer: net.storage.id, protocol: UPLOAD_PROTOCOL },
      task,
    };
    out.push({ h, order, envelope: await signOrder(order, net.manager.key) });
  }
  return out;
}

async function run(orders: { h: number; order: TaskOrder; envelope: SignedEnvelope }[], hash: boolean, via: { router: Router; peers: PeerTable } = { router: net.manager.router, peers: net.manager.peers }, concurrency = opts.concurrency) {
  const stretch: number[] = [];
  const extra: number[] = [];
  const latency: number[] = [];
  let exact = 0;
  let asOracle = 0;
  let failed = 0;
  // Where a choice differs from the oracle's: the oracle's crawler was not
  // among the candidates (the cell search missed it), or it was but ranked
  // lower (the router's view of coordinates is stale), or the order went on
  // after a refusal; and how long routes that waited for the DHT took.
  const why = { missed: 0, staleRank: 0, retried: 0 };
  // The same split, finer (#18): a miss whose crawler has not announced yet
  // (at the last refresh, before routing), one whose crawler lies outside the block of
  // the finest level found (the search's geometry) or inside it yet absent
  // from the providers (a partial list, or not announced at that level); a
  // candidate ranked lower because the manager's copy of the coordinates puts
  // the chosen one nearer (its copy is older than the live one the oracle
  // reads) or because the placement policy's load/spill order put it lower.
  // Per class: routes, the RTT given up (chosen − oracle's crawler, ms, summed)
  // and the stretch p90 had those routes gone to the oracle's crawler.
  const classes = ['missedNotAnnounced', 'missedOutsideBlock', 'missedInBlock', 'rankedLowerByManagerCoords', 'rankedLowerByPolicy', 'retried'] as const;
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
  const inBlock = { listedButDown: 0, listedOther: 0, unlistedAnnouncedElsewhere: 0, unlistedAnnouncedInBlock: 0 };
  let confirmQueries = 0;
  type Cls = (typeof classes)[number];
  const byClass = new Map<Cls, { routes: number; extraMs: number }>(classes.map((c) => [c, { routes: 0, extraMs: 0 }]));
  const routed: { stretch: number; oracleStretch: number; cls?: Cls }[] = [];
  const coordDriftMs: number[] = [];
  const table = via.peers;
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
      let cls: Cls | undefined;
      if (i === oi) asOracle++;
      else if (!hash) {
        const oid = net.peerIdOf(oi);
        const hc = fromWireCoord(o.order.hostCoord!);
        if (r.attempts > 1) {
          why.retried++;
          cls = 'retried';
        } else if (r.ranked === undefined || !r.ranked.includes(oid)) {
          why.missed++;
          const level = r.level >= 0 ? r.level : DEFAULT_CELLS.minLevel;
          const own = cellAt(net.published(oi), level).name;
          const block = blockAround(hc, level);
          if (net.announcements(oi) === 0) cls = 'missedNotAnnounced';
          else cls = block.some((c) => c.name === own) ? 'missedInBlock' : 'missedOutsideBlock';
          if (cls === 'missedInBlock') {
            if (!block.some((c) => via.router.cellLookup.peek(c)?.ids.includes(oid) === true)) {
              const announced = new Set(net.announcedCells(oi));
              if (block.some((c) => announced.has(c.name))) inBlock.unlistedAnnouncedInBlock++;
              else inBlock.unlistedAnnouncedElsewhere++;
            }
            else if (table.get(oid)?.down === true) inBlock.listedButDown++;
            else inBlock.listedOther++;
          }
        } else {
          why.staleRank++;
          const mine = table.get(r.chosen)?.coord;
          const theirs = table.get(oid)?.coord;
          cls = mine !== undefined && theirs !== undefined && predictRtt(theirs, hc) >= predictRtt(mine, hc) ? 'rankedLowerByManagerCoords' : 'rankedLowerByPolicy';
          // How far the manager's copies lie from the published coordinates the oracle read (ms in coordinate space).
          for (const [copy, j] of [[mine, i], [theirs, oi]] as const) {
            if (copy !== undefined) coordDriftMs.push(Math.hypot(...Array.from(copy.vec, (x, a) => x - (net.published(j).vec[a] ?? 0))));
          }
        }
        const c = byClass.get(cls)!;
        c.routes++;
        c.extraMs += net.rtt(o.h, net.index[i]!) - net.rtt(o.h, net.index[oi]!);
      }
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
  const p90If = (fixed: Cls) => quantileSorted(routed.map((x) => (x.cls === fixed ? x.oracleStretch : x.stretch)).sort((a, b) => a - b), 0.9);
  coordDriftMs.sort((a, b) => a - b);
  const diagnosis = {
    ...why,
    unlikeOracle: Object.fromEntries(classes.map((c) => [c, { routes: byClass.get(c)!.routes, extraMsSum: Math.round(byClass.get(c)!.extraMs), stretchP90IfOracle: hash ? undefined : p90If(c) }])),
    managerCopyDriftMsMedian: quantileSorted(coordDriftMs, 0.5),
    missedInBlockWhy: inBlock,
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

const before = net.index.map((_, i) => Float64Array.from(net.coord(i).vec)); // a copy: TestNet's are live
const beforePub = net.index.map((_, i) => Float64Array.from(net.published(i).vec));
const changesBefore = net.index.map((_, i) => net.publishedChanges(i));
const coordOrders = await makeOrders(opts.tasks, true, 'c');
const hashOrders = await makeOrders(opts.hashTasks, false, 'x');
const tr = performance.now();
// --ab-unconfirmed: the router before session 10 beside ours, in the same
// network at the same time — a pair that no run-to-run spread (convergence,
// load) separates. Its table starts as a copy of the manager's (the copies
// it would rank on), it asks its own info queries, and it reads the same cell
// answers (one cache: the comparison is of the ranking alone). Each router
// gets half the concurrency, so the network carries the usual load.
let twin: { router: Router; peers: PeerTable } | undefined;
if (opts.abUnconfirmed) {
  const peers = new PeerTable();
  for (const p of net.manager.peers.all()) {
    const q = peers.note(p.id, { crawler: p.crawler, ...(p.coord !== undefined ? { coord: p.coord } : {}), ...(p.load !== undefined ? { load: p.load } : {}) });
    q.coordAt = p.coordAt;
    q.down = p.down;
  }
  const coords = new CoordService({ libp2p: net.manager.libp2p, peers, crawler: false, rng: createRng(deriveSeed(opts.seed, 'twin')) });
  const router = new Router({ libp2p: net.manager.libp2p, peers, coords, cacheTtlMs: netOptions.routerCacheTtlMs, confirmTop: 0 });
  const shared = net.manager.router.cellLookup;
  router.cellLookup.providers = (c) => shared.providers(c);
  router.cellLookup.cached = (c) => shared.cached(c);
  router.cellLookup.peek = (c) => shared.peek(c);
  twin = { router, peers };
}
// The twin of each order: the same host and host coordinate, its own task id.
const twinOrders =
  twin !== undefined
    ? await Promise.all(
        coordOrders.map(async (o, k) => {
          const task = net.makeTask(o.h, `u${k}-${o.h}`);
          const order: TaskOrder = { ...o.order, id: String(task.id), task };
          return { h: o.h, order, envelope: await signOrder(order, net.manager.key) };
        }),
      )
    : [];
const half = Math.max(1, Math.floor(opts.concurrency / 2));
const [byCoord, unconfirmed] = await Promise.all([
  run(coordOrders, false, undefined, twin !== undefined ? half : opts.concurrency),
  twin !== undefined ? run(twinOrders, false, twin, half) : Promise.resolve(undefined),
]);
say(`routed ${opts.tasks} tasks by coordinate in ${((performance.now() - tr) / 1000).toFixed(1)} s (${byCoord.failed} failed)`);
say(`  stretch median ${quantileSorted(byCoord.stretch, 0.5).toFixed(3)} p90 ${quantileSorted(byCoord.stretch, 0.9).toFixed(3)}, accept p50 ${quantileSorted(byCoord.latency, 0.5).toFixed(1)} ms p99 ${quantileSorted(byCoord.latency, 0.99).toFixed(1)} ms`);
const byHash = await run(hashOrders, true);
say(`routed ${opts.hashTasks} tasks by hash (${byHash.failed} failed)`);
await net.refresh();
// How far the crawlers' own coordinates moved while the tasks were routed: the
// oracle reads them as they were before routing, a router that confirms its
// copies reads them as they are, so this is how far the two can disagree
// without either being wrong.
const motionOf = (coordOf: (i: number) => Coordinate, from: Float64Array[]) => net.index.map((_, i) => Math.hypot(...Array.from(coordOf(i).vec, (x, a) => x - (from[i]![a] ?? 0)))).sort((a, b) => a - b);
const motion = motionOf(sysCoord, before);
const motionPub = motionOf(pubCoord, beforePub);
const changesWhileRouting = net.index.map((_, i) => net.publishedChanges(i) - changesBefore[i]!).sort((a, b) => a - b);
// Peak resident memory of every process that hosts nodes (maxRSS is in KiB).
const usage = net instanceof ProcessNet ? net.usage() : undefined;
const peakRssSumMB = process.resourceUsage().maxRSS / 1024 + (usage?.peakRssSumMB ?? 0);

const result = {
  nodes: opts.nodes,
  processes: usage?.processes ?? 1,
  tasks: opts.tasks,
  hashTasks: opts.hashTasks,
  converged: convergeSeconds !== null,
  convergeSeconds,
  settledSeconds,
  stretchMedian: quantileSorted(byCoord.stretch, 0.5),
  stretchP90: quantileSorted(byCoord.stretch, 0.9),
  oracleStretchMedian: quantileSorted(oracle, 0.5),
  oracleStretchP90: quantileSorted(oracle, 0.9),
  publishedOracleStretchMedian: quantileSorted(pubOracle.stretch, 0.5),
  publishedOracleStretchP90: quantileSorted(pubOracle.stretch, 0.9),
  publishedOracleExtraRttMsMedian: quantileSorted(pubOracle.extra, 0.5),
  publishedOracleExtraRttMsP90: quantileSorted(pubOracle.extra, 0.9),
  offlineOracleStretchMedian: quantileSorted(offlineOracle, 0.5),
  offlineOracleStretchP90: quantileSorted(offlineOracle, 0.9),
  extraRttMsMedian: quantileSorted(byCoord.extra, 0.5),
  extraRttMsP90: quantileSorted(byCoord.extra, 0.9),
  oracleExtraRttMsMedian: quantileSorted(oracleExtra, 0.5),
  oracleExtraRttMsP90: quantileSorted(oracleExtra, 0.9),
  hashStretchMedian: quantileSorted(byHash.stretch, 0.5),
  hashStretchP90: quantileSorted(byHash.stretch, 0.9),
  exactNearest: byCoord.exact / Math.max(1, byCoord.stretch.length),
  sameAsOracle: byCoord.asOracle / Math.max(1, byCoord.stretch.length),
  acceptP50Ms: quantileSorted(byCoord.latency, 0.5),
  acceptP99Ms: quantileSorted(byCoord.latency, 0.99),
  ...(unconfirmed !== undefined
    ? {
        unconfirmed: {
          stretchMedian: quantileSorted(unconfirmed.stretch, 0.5),
          stretchP90: quantileSorted(unconfirmed.stretch, 0.9),
          extraRttMsMedian: quantileSorted(unconfirmed.extra, 0.5),
          extraRttMsP90: quantileSorted(unconfirmed.extra, 0.9),
          sameAsOracle: unconfirmed.asOracle / Math.max(1, unconfirmed.stretch.length),
          acceptP50Ms: quantileSorted(unconfirmed.latency, 0.5),
          acceptP99Ms: quantileSorted(unconfirmed.latency, 0.99),
          failed: unconfirmed.failed,
          diagnosis: unconfirmed.diagnosis,
        },
      }
    : {}),
  diagnosis: { ...byCoord.diagnosis, coordMotionDuringRoutingMsMedian: quantileSorted(motion, 0.5), publishedMotionDuringRoutingMsMedian: quantileSorted(motionPub, 0.5), publishedChangesDuringRoutingMedian: quantileSorted(changesWhileRouting, 0.5), routerConfirmQueries: net.manager.router.confirmQueries },
  hashAcceptP50Ms: quantileSorted(byHash.latency, 0.5),
  failed: byCoord.failed,
  hashFailed: byHash.failed,
  liveMedianError: live,
  liveMedianErrorPublished: livePublished,
  appCoord,
  offlineMedianError: offline,
  startSeconds,
  perProcess: opts.perProcess,
  coordIntervalMs: opts.coordInterval,
  peakRssSumMB,
  childCpuSeconds: usage?.cpuSeconds,
  cpuPctPerNode: bill.cpuPctPerNode,
  settleActivityPerNodeMinute: bill.perNodeMinute,
  concurrency: opts.concurrency,
  seed: opts.seed,
  loadAverage: Number(((load0 + loadavg()[0]!) / 2).toFixed(2)),
  wallSeconds: (performance.now() - t0) / 1000,
};
if (opts.json) console.log(JSON.stringify(result));
else {
  console.log(`stretch median ${result.stretchMedian.toFixed(3)} p90 ${result.stretchP90.toFixed(3)} (exact nearest ${(result.exactNearest * 100).toFixed(0)}%)`);
  console.log(`best possible from the Vivaldi (system) coordinates: stretch median ${result.oracleStretchMedian.toFixed(3)} p90 ${result.oracleStretchP90.toFixed(3)}`);
  console.log(`best possible from the published coordinates (what the router ranks): stretch median ${result.publishedOracleStretchMedian.toFixed(3)} p90 ${result.publishedOracleStretchP90.toFixed(3)}, extra RTT ${result.publishedOracleExtraRttMsMedian.toFixed(1)} / ${result.publishedOracleExtraRttMsP90.toFixed(1)} ms (same choice as ours ${(result.sameAsOracle * 100).toFixed(0)}%); live error ${result.liveMedianErrorPublished.toFixed(3)} (Vivaldi's ${result.liveMedianError.toFixed(3)})`);
  console.log(`best possible from converged (offline) coordinates: stretch median ${result.offlineOracleStretchMedian.toFixed(3)} p90 ${result.offlineOracleStretchP90.toFixed(3)}`);
  console.log(`extra RTT over the nearest crawler: median ${result.extraRttMsMedian.toFixed(1)} ms p90 ${result.extraRttMsP90.toFixed(1)} ms (best possible: ${result.oracleExtraRttMsMedian.toFixed(1)} / ${result.oracleExtraRttMsP90.toFixed(1)} ms)`);
  if (result.unconfirmed !== undefined) {
    const u = result.unconfirmed;
    console.log(`beside it, unconfirmed (ranking on the copies as they are): stretch median ${u.stretchMedian.toFixed(3)} p90 ${u.stretchP90.toFixed(3)} (same choice as the oracle ${(u.sameAsOracle * 100).toFixed(0)}%), extra RTT ${u.extraRttMsMedian.toFixed(1)} / ${u.extraRttMsP90.toFixed(1)} ms, accept p50 ${u.acceptP50Ms.toFixed(1)} ms p99 ${u.acceptP99Ms.toFixed(1)} ms`);
  }
  console.log(`hash routing stretch median ${result.hashStretchMedian.toFixed(3)} p90 ${result.hashStretchP90.toFixed(3)}`);
  const d = result.diagnosis;
  console.log(`choices unlike the oracle's: ${d.missed} not among the candidates, ${d.staleRank} ranked lower (stale coordinates), ${d.retried} after a refusal; candidates median ${d.candidatesMedian} (p10 ${d.candidatesP10}), finest level found ${JSON.stringify(d.levels)}`);
  console.log(`  by class (routes, RTT given up in ms, stretch p90 had they gone to the oracle's crawler): ${Object.entries(d.unlikeOracle).map(([k, v]) => `${k} ${v.routes} / ${v.extraMsSum} / ${v.stretchP90IfOracle?.toFixed(2)}`).join('; ')}; the manager's coordinate copies (ranked lower) lie a median ${d.managerCopyDriftMsMedian.toFixed(1)} ms from the live ones`);
  console.log(`routes that waited for a DHT lookup: ${d.routesThatFetched} (accept p50 ${d.fetchedAcceptP50Ms.toFixed(1)} ms p99 ${d.fetchedAcceptP99Ms.toFixed(1)} ms); from cache p50 ${d.cachedAcceptP50Ms.toFixed(1)} ms p99 ${d.cachedAcceptP99Ms.toFixed(1)} ms`);
  console.log(`submit-to-accept p50 ${result.acceptP50Ms.toFixed(1)} ms p99 ${result.acceptP99Ms.toFixed(1)} ms (concurrency ${opts.concurrency})`);
  console.log(`peak RSS summed over processes ${peakRssSumMB.toFixed(0)} MB; ${result.nodes} nodes in ${result.processes} process(es); whole run ${result.wallSeconds.toFixed(0)} s (load average ${result.loadAverage})`);
}
await net.stop();
process.exit(0);
