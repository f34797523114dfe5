// npm run nat-check [-- --json] [--wait <seconds>] [--tasks <n>] [--keep-logs]
//
// Builds the NAT test network (testbed/nat DEFAULT_SPEC: the manager, two
// public volunteers offering relay service, volunteers behind a cone NAT, a
// symmetric NAT, a cone home behind a carrier-grade NAT, and a router offering
// UPnP/NAT-PMP; plus nat5 behind a cone NAT that holds no relay reservation,
// `--relay-reservations 0`, so nobody can dial it and it pulls its tasks), runs
// the real `dht-manager serve` and `volunteer-crawler join` (without --lan) in
// it. Needs root, `ip`, `nft` (and miniupnpd for the mapped case); says why and
// exits 2 otherwise.
//
// Every figure comes from what the system itself knows, never from log lines:
// how each volunteer can be reached is the manager's /api/crawlers
// `reachability`, polled every few seconds through the whole run (a volunteer
// counts as reachable when the manager listed it reachable by some path at some
// poll; the final view is reported beside it); punched pairs, tasks pulled and
// the coordinate counters are each volunteer's own status (its control socket,
// as `volunteer-crawler status` reads it) at the end: counters that no log
// rotation can lose. `relayedRttsInVivaldi` sums the Vivaldi samples volunteers
// took over a relayed connection (read from the connection each probe ran on;
// target 0), `relayedProbesRefused` the probes refused for it.
//
// Once settled it adds <n> channels (one page each, one site each on the test web in the
// `web` namespace) and waits until each was crawled. The public volunteers are
// paused by their owners (they stay relays and observers, and hand on any order
// that reaches them), so every task is crawled behind NAT.
// Then the pull stage: every NATed volunteer but the puller is paused and 10
// more channels are added, which only a pull can take (`pullStage`).
// Every process's whole output goes to a log file; the logs (and the volunteers'
// data directories) are kept when a target is missed or with --keep-logs, and
// their directory is printed.
import { parseArgsOrExit } from './parse-args.js';
import { controlRequest } from '../src/node/control.js';
import type { OwnerStatus } from '../src/node/owner-status.js';
import { waitForLine } from '../testbed/nat/lines.js';
import { DEFAULT_SPEC, hasUpnp, type NatNetSpec } from '../testbed/nat/network.js';
import { namespaceSupport } from '../testbed/nat/netns.js';
import { JoinNet } from '../testbed/nat/volunteers.js';

const { values: v } = parseArgsOrExit({
  options: {
    json: { type: 'boolean', default: false },
    wait: { type: 'string', default: '150' },
    tasks: { type: 'string', default: '200' },
    'keep-logs': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (v.help) {
  process.stdout.write(
    'usage: npm run nat-check [-- --json] [--wait <seconds>] [--tasks <n>] [--keep-logs]\n  builds the NAT test network, runs the manager and volunteers in it, reports how the manager reaches each NATed volunteer,\n  then has the NATed volunteers crawl <n> one-page channels (default 200; 0: none) and counts the completed ones;\n  logs are kept (and their directory printed) when a target is missed or with --keep-logs\n',
  );
  process.exit(0);
}
function usageError(msg: string): never {
  process.stderr.write(`${msg}\n`);
  process.exit(2);
}
const waitS = Number(v.wait);
if (!(waitS > 0)) usageError(`--wait: a positive number of seconds, got ${v.wait}`);
const taskCount = Number(v.tasks);
if (!Number.isInteger(taskCount) || taskCount < 0 || taskCount > 10_000) usageError(`--tasks: an integer in 0..10000, got ${v.tasks}`);
const why = namespaceSupport();
if (why !== null) {
  process.stderr.write(`nat-check: cannot build the NAT test network here: ${why}\n`);
  process.exit(2);
}

const PUBLIC_VOLUNTEERS = ['pub1', 'pub2'];
/** The volunteer forced to pull: no relay reservation, so no push can reach it. */
const PULLER = 'nat5';
const SPEC: NatNetSpec = { ...DEFAULT_SPEC, routers: [...DEFAULT_SPEC.routers, { name: 'home5', nat: 'cone', hosts: [PULLER] }] };
const natted = SPEC.routers.flatMap((r) => r.hosts ?? []);
/** Reach kinds by which others get tasks to a volunteer (the rest: not yet, or nobody). */
const USABLE = new Set(['public', 'mapped', 'punched', 'relayed', 'pull']);
const progress = (s: string) => process.stderr.write(`nat-check: ${s}\n`);
progress(`building the network; manager, ${PUBLIC_VOLUNTEERS.length} public and ${natted.length} NATed volunteers${hasUpnp() ? '' : ' (no miniupnpd: the UPnP router is a plain cone NAT)'}`);
const jn = await JoinNet.start(SPEC, { publicVolunteers: PUBLIC_VOLUNTEERS, hostArgs: { [PULLER]: ['--relay-reservations', '0'] }, logs: true });
const hostOf = new Map([...jn.volunteers].map(([h, p]) => [p.peerId, h]));
/** The pull stage: every other NATed volunteer paused, channels added, crawled only if the puller pulls them. */
const PULL_STAGE_CHANNELS = 10;
let pullStage: { channels: number; crawled: number; crawledByPuller: number } | null = null;

// The manager's view, polled through the whole run: every reach kind it listed for each volunteer, and the last poll.
interface CrawlerRow {
  id: string;
  reachability: string | null;
}
const managerSaw = new Map<string, Set<string>>();
let lastView: CrawlerRow[] = [];
let polling = false;
const pollManager = async (): Promise<void> => {
  if (polling) return;
  polling = true;
  try {
    lastView = (await jn.api<{ crawlers: CrawlerRow[] }>('/api/crawlers')).body.crawlers;
    for (const c of lastView) {
      const h = hostOf.get(c.id);
      if (h === undefined || c.reachability === null) continue;
      if (!managerSaw.has(h)) managerSaw.set(h, new Set());
      managerSaw.get(h)!.add(c.reachability);
    }
  } catch (err) {
    progress(`could not read /api/crawlers: ${String(err)}`);
  } finally {
    polling = false;
  }
};
const poller = setInterval(() => void pollManager(), 3000);

const statuses: Record<string, OwnerStatus | null> = {};
const t0 = Date.now();
let tasks: { issued: number | null; succeeded: number | null; channels: number; crawled: number; crawledBehindNat: number; seconds: number | null } = { issued: null, succeeded: null, channels: 0, crawled: 0, crawledBehindNat: 0, seconds: null };
let report: ReturnType<typeof buildReport> | undefined;
let kept: string | null | undefined;
try {
  // Settled (as the volunteers themselves say, through their control sockets): public volunteers public, the
  // one behind the UPnP router mapped (where miniupnpd runs), the puller pulling, every other NATed one past
  // 'starting' with a NAT type from two observers — or the wait is over.
  const end = Date.now() + waitS * 1000;
  const upnpHosts = hasUpnp() ? SPEC.routers.filter((r) => r.upnp === true).flatMap((r) => r.hosts ?? []) : [];
  const settled = (h: string, s: OwnerStatus | null): boolean => {
    const n = s?.network;
    if (n === undefined) return false;
    if (PUBLIC_VOLUNTEERS.includes(h)) return n.reach === 'public';
    if (h === PULLER) return n.nat?.pull === true;
    if (upnpHosts.includes(h)) return n.reach === 'mapped';
    return n.reach !== undefined && n.reach !== 'starting' && n.nat !== undefined && n.nat.natType !== 'unknown';
  };
  for (;;) {
    const pending: string[] = [];
    for (const h of jn.volunteers.keys()) if (!settled(h, await jn.status(h))) pending.push(h);
    if (pending.length === 0 || Date.now() > end) {
      progress(pending.length > 0 ? `not settled after ${waitS} s: ${pending.join(', ')}` : `settled after ${Math.round((Date.now() - t0) / 1000)} s`);
      break;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (taskCount > 0) tasks = await crawlBehindNat(taskCount);
  if (taskCount > 0) pullStage = await crawlByPull(PULL_STAGE_CHANNELS);
  clearInterval(poller);
  await pollManager();
  for (const h of jn.volunteers.keys()) statuses[h] = await jn.status(h);
  report = buildReport();
} finally {
  clearInterval(poller);
  const missed = report === undefined ? ['the check did not finish'] : report.missed;
  kept = await jn.stop({ keep: v['keep-logs'] || missed.length > 0 });
  if (kept !== null) progress(`${missed.length > 0 ? `missed: ${missed.join('; ')}; ` : ''}logs kept in ${kept} (logs/<host>.log: each process's output; <host>/volunteer.log: each volunteer's own log)`);
}

/** The figures, and the targets each misses. */
function buildReport() {
  const status = (h: string) => statuses[h] ?? null;
  const saw = (h: string) => [...(managerSaw.get(h) ?? [])];
  const usable = (h: string) => saw(h).filter((k) => USABLE.has(k));
  const final = (h: string) => lastView.find((c) => c.id === jn.volunteers.get(h)!.peerId)?.reachability ?? null;
  const only = (h: string, kind: string) => usable(h).length > 0 && usable(h).every((k) => k === kind);
  // Punched pairs, from both ends' own lists (either end's list counts: a pair is one punch).
  const pairs = new Set<string>();
  for (const h of jn.volunteers.keys()) {
    for (const peer of status(h)?.network?.nat?.punchedPeers ?? []) pairs.add([h, hostOf.get(peer) ?? peer].sort().join('+'));
  }
  const punchedHosts = new Set([...pairs].flatMap((p) => p.split('+')));
  // A punch can pass a cone NAT; a volunteer dialled directly (mapped) or pulling needs none.
  const punchable = natted.filter((h) => status(h)?.network?.nat?.natType === 'cone' && !usable(h).includes('mapped') && !only(h, 'pull'));
  const answered = [...jn.volunteers.keys()].filter((h) => status(h)?.network !== undefined);
  const coords = answered.map((h) => status(h)!.network!.coordinates);
  const sum = (f: (c: (typeof coords)[number]) => number) => coords.reduce((n, c) => n + f(c), 0);
  const managerView: Record<string, number> = {};
  for (const c of lastView) managerView[String(c.reachability)] = (managerView[String(c.reachability)] ?? 0) + 1;
  const r = {
    natedVolunteers: natted.length,
    // One way or another, as the manager listed it at some poll: dialled directly, through a relay, punched, or pulling.
    reachable: natted.filter((h) => usable(h).length > 0).length,
    reachableAtEnd: natted.filter((h) => USABLE.has(String(final(h)))).length,
    mapped: natted.filter((h) => usable(h).includes('mapped')).length,
    holePunched: pairs.size,
    punchable: punchable.length,
    punchableThatPunched: punchable.filter((h) => punchedHosts.has(h)).length,
    relayedOnly: natted.filter((h) => only(h, 'relayed')).length,
    pullOnly: natted.filter((h) => only(h, 'pull')).length,
    tasksPulled: answered.reduce((n, h) => n + (status(h)!.network!.tasksPulled ?? 0), 0),
    tasksIssued: tasks.issued,
    tasksCompleted: tasks.succeeded,
    channels: tasks.channels,
    channelsCrawled: tasks.crawled,
    channelsCrawledBehindNat: tasks.crawledBehindNat,
    crawlSeconds: tasks.seconds,
    relayedRttsInVivaldi: answered.length > 0 ? sum((c) => c.relayedSamples) : null,
    relayedProbesRefused: sum((c) => c.relayedProbesRefused),
    vivaldiSamples: sum((c) => c.samples),
    notMeasured: [...jn.volunteers.keys()].filter((h) => !answered.includes(h)).map((h) => `${h}: its status did not answer at the end`),
    pullStage,
    managerView,
    volunteers: Object.fromEntries(
      [...jn.volunteers.keys()].map((h) => {
        const n = status(h)?.network;
        return [h, { managerSaw: saw(h), managerFinal: final(h), says: n?.reach ?? null, natType: n?.nat?.natType ?? null, relays: n?.nat?.relays ?? null, punchedWith: (n?.nat?.punchedPeers ?? []).map((p) => hostOf.get(p) ?? p), tasksPulled: n?.tasksPulled ?? null, coordinates: n?.coordinates ?? null }];
      }),
    ),
    missed: [] as string[],
  };
  if (r.reachable < r.natedVolunteers) r.missed.push(`${r.reachable}/${r.natedVolunteers} NATed volunteers reachable`);
  if (r.channelsCrawled < r.channels) r.missed.push(`${r.channelsCrawled}/${r.channels} channels crawled`);
  if (pullStage !== null && pullStage.crawledByPuller < pullStage.channels) r.missed.push(`pull stage ${pullStage.crawledByPuller}/${pullStage.channels}`);
  if (r.relayedRttsInVivaldi !== 0) r.missed.push(`relayed RTTs in Vivaldi: ${String(r.relayedRttsInVivaldi)}`);
  if (r.punchableThatPunched < r.punchable) r.missed.push(`${r.punchableThatPunched}/${r.punchable} volunteers behind a cone NAT punched`);
  if (r.notMeasured.length > 0) r.missed.push(r.notMeasured.join(', '));
  return r;
}

if (report === undefined) process.exit(1);
if (v.json) process.stdout.write(`${JSON.stringify({ ...report, logs: kept ?? null })}\n`);
else {
  process.stdout.write(`${'volunteer'.padEnd(10)} ${'manager saw'.padEnd(24)} ${'at end'.padEnd(9)} ${'says'.padEnd(9)} NAT type   punched with       pulled  samples (relayed)\n`);
  for (const [h, s] of Object.entries(report.volunteers)) {
    const c = s.coordinates;
    process.stdout.write(`${h.padEnd(10)} ${s.managerSaw.join(',').padEnd(24)} ${String(s.managerFinal).padEnd(9)} ${String(s.says).padEnd(9)} ${String(s.natType ?? '-').padEnd(10)} ${(s.punchedWith.join(',') || '-').padEnd(18)} ${String(s.tasksPulled ?? '-').padEnd(7)} ${c === null ? '-' : `${c.samples} (${c.relayedSamples}; ${c.relayedProbesRefused} refused)`}\n`);
  }
  if (pullStage !== null) process.stdout.write(`pull stage (every other NATed volunteer paused): ${pullStage.crawledByPuller}/${pullStage.channels} channels crawled by ${PULLER}, which pulls\n`);
  process.stdout.write(`the manager's view at the end: ${Object.entries(report.managerView).map(([k, n]) => `${n} ${k}`).join(', ')}\n`);
  process.stdout.write(`\n${report.holePunched} pairs hole-punched (${report.punchableThatPunched}/${report.punchable} behind a cone NAT punched); ${tasks.crawled}/${tasks.channels} channels crawled (${tasks.crawledBehindNat} behind NAT), ${String(tasks.succeeded)} of ${String(tasks.issued)} tasks succeeded`);
  process.stdout.write(`\n${report.reachable}/${report.natedVolunteers} NATed volunteers reached by the manager (${report.reachableAtEnd} at the end; ${report.mapped} mapped, ${report.relayedOnly} relayed only, ${report.pullOnly} pulling only: ${report.tasksPulled} tasks pulled); relayed RTTs in Vivaldi: ${String(report.relayedRttsInVivaldi)} of ${report.vivaldiSamples} samples (${report.relayedProbesRefused} relayed probes refused)\n`);
  if (report.missed.length > 0) process.stdout.write(`targets missed: ${report.missed.join('; ')}\n`);
}

/** Pauses every NATed volunteer but the puller, adds `n` one-page channels, and counts those the puller crawled (bounded wait). */
async function crawlByPull(n: number): Promise<NonNullable<typeof pullStage>> {
  for (const h of natted) if (h !== PULLER) await controlRequest(jn.dataDir(h), { cmd: 'pause' });
  progress(`pull stage: every NATed volunteer but ${PULLER} paused; ${n} channels for it`);
  const ids = await addChannels(n, 'p', 4);
  const puller = jn.volunteers.get(PULLER)!.peerId;
  const end = Date.now() + 300_000;
  let got: { crawled: number; byPuller: number };
  for (;;) {
    got = { crawled: 0, byPuller: 0 };
    for (const id of ids) {
      const h = (await jn.api<{ history: { crawler?: string }[] }>(`/api/channels/${id}`)).body.history;
      if (h.length > 0) got.crawled++;
      if (h.some((x) => x.crawler === puller)) got.byPuller++;
    }
    if (got.crawled >= n || Date.now() > end) break;
    progress(`pull stage: ${got.crawled}/${n} channels crawled`);
    await new Promise((r) => setTimeout(r, 5000));
  }
  return { channels: n, crawled: got.crawled, crawledByPuller: got.byPuller };
}

/** Starts a test web with `n` one-site origins named <prefix><i> and adds a one-page channel for each; returns the channel ids. */
async function addChannels(n: number, prefix: string, seed: number): Promise<string[]> {
  const ip = jn.net.host('web').ip;
  // One site per channel: a channel is an origin and its path prefixes.
  const sites = Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}`, pages: 2, bindHost: ip }));
  const web = jn.net.spawnIn('web', 'testbed/nat/web.ts', [JSON.stringify({ sites, seed })]);
  const origins = (JSON.parse((await waitForLine(web, /^\{"origins"/, 60_000)).input) as { origins: Record<string, string> }).origins;
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const url = `${origins[`${prefix}${i}`]}/`;
    const r = await jn.api<{ id: string }>('/api/channels', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url, depth: 0, delayMs: 0, group: 0 }) });
    if (r.status !== 201) throw new Error(`adding channel ${url}: HTTP ${r.status}`);
    ids.push(r.body.id);
  }
  return ids;
}

/** Pauses the public volunteers, adds `n` one-page channels on the test web, and waits (bounded) until each was crawled. */
async function crawlBehindNat(n: number): Promise<typeof tasks> {
  for (const h of PUBLIC_VOLUNTEERS) await controlRequest(jn.dataDir(h), { cmd: 'pause' });
  const ids = await addChannels(n, 's', 3);
  progress(`${n} channels added; the NATed volunteers crawl them`);
  const nated = new Set(natted.map((h) => jn.volunteers.get(h)!.peerId));
  const start = Date.now();
  const end = start + Math.max(300, n * 3) * 1000;
  const count = async (): Promise<{ crawled: number; behindNat: number }> => {
    let crawled = 0;
    let behindNat = 0;
    for (const id of ids) {
      const h = (await jn.api<{ history: { crawler?: string }[] }>(`/api/channels/${id}`)).body.history;
      if (h.length > 0) crawled++;
      if (h.some((x) => x.crawler !== undefined && nated.has(x.crawler))) behindNat++;
    }
    return { crawled, behindNat };
  };
  let got = await count();
  while (got.crawled < n && Date.now() < end) {
    progress(`${got.crawled}/${n} channels crawled`);
    await new Promise((r) => setTimeout(r, 5000));
    got = await count();
  }
  const { crawled, behindNat } = got;
  const seconds = Math.round((Date.now() - start) / 1000);
  const c = (await jn.api<{ counters: { tasksIssued: number; tasksSucceeded: number } }>('/api/status')).body.counters;
  return { issued: c.tasksIssued, succeeded: c.tasksSucceeded, channels: n, crawled, crawledBehindNat: behindNat, seconds };
}
