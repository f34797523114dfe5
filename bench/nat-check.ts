// npm run nat-check [-- --json] [--wait <seconds>] [--tasks <n>]
//
// Builds the NAT test network (testbed/nat DEFAULT_SPEC: the manager, two
// public volunteers offering relay service, volunteers behind a cone NAT, a
// symmetric NAT, a cone home behind a carrier-grade NAT, and a router offering
// UPnP/NAT-PMP; plus nat5 behind a cone NAT that holds no relay reservation,
// `--relay-reservations 0`, so nobody can dial it and it pulls its tasks), runs the real `dht-manager serve` and `volunteer-crawler join`
// (without --lan) in it, and reports how each NATed volunteer can be reached,
// read from its own log. Needs root, `ip`, `nft` (and miniupnpd for the mapped
// case); says why and exits 2 otherwise.
//
// Once settled it adds <n> channels (one page each, one site each on the test web in the
// `web` namespace) and waits until each was crawled. The public volunteers are
// paused by their owners (they stay relays and observers, and hand on any order
// that reaches them), so every task is crawled behind NAT. Hole punches count
// pairs of volunteers that punched a direct connection (both ends log it).
// Then the pull stage: every NATed volunteer but the puller is paused and 10
// more channels are added, which only a pull can take (`pullStage`).
// Relayed RTTs in Vivaldi are not counted here (null, in "notMeasured"): the
// coordinate protocol refuses relayed connections, which test/nat proves.
import { parseArgs } from 'node:util';
import { controlRequest } from '../src/node/control.js';
import { waitForLine } from '../testbed/nat/lines.js';
import { DEFAULT_SPEC, hasUpnp, type NatNetSpec } from '../testbed/nat/network.js';
import { namespaceSupport } from '../testbed/nat/netns.js';
import { JoinNet, type VolunteerNat } from '../testbed/nat/volunteers.js';

const { values: v } = parseArgs({ options: { json: { type: 'boolean', default: false }, wait: { type: 'string', default: '150' }, tasks: { type: 'string', default: '200' }, help: { type: 'boolean', short: 'h', default: false } } });
if (v.help) {
  process.stdout.write(
    'usage: npm run nat-check [-- --json] [--wait <seconds>] [--tasks <n>]\n  builds the NAT test network, runs the manager and volunteers in it, reports how each NATed volunteer is reachable,\n  then has the NATed volunteers crawl <n> one-page channels (default 200; 0: none) and counts the completed ones\n',
  );
  process.exit(0);
}
const waitS = Number(v.wait);
if (!(waitS > 0)) throw new Error('--wait: a positive number of seconds');
const taskCount = Number(v.tasks);
if (!Number.isInteger(taskCount) || taskCount < 0 || taskCount > 10_000) throw new Error('--tasks: an integer in 0..10000');
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
const progress = (s: string) => process.stderr.write(`nat-check: ${s}\n`);
progress(`building the network; manager, ${PUBLIC_VOLUNTEERS.length} public and ${natted.length} NATed volunteers${hasUpnp() ? '' : ' (no miniupnpd: the UPnP router is a plain cone NAT)'}`);
const jn = await JoinNet.start(SPEC, { publicVolunteers: PUBLIC_VOLUNTEERS, hostArgs: { [PULLER]: ['--relay-reservations', '0'] } });
/** The pull stage: every other NATed volunteer paused, channels added, crawled only if the puller pulls them. */
const PULL_STAGE_CHANNELS = 10;
let pullStage: { channels: number; crawled: number; crawledByPuller: number } | null = null;
/** The manager's own view (/api/crawlers' reachability column) at the end. */
const managerView: Record<string, number> = {};
let states: Record<string, VolunteerNat> = {};
const t0 = Date.now();
let tasks: { issued: number | null; succeeded: number | null; channels: number; crawled: number; crawledBehindNat: number; seconds: number | null } = { issued: null, succeeded: null, channels: 0, crawled: 0, crawledBehindNat: 0, seconds: null };
try {
  // Settled: public volunteers confirmed public, the one behind the UPnP router mapped (where miniupnpd
  // runs), every NATed one past 'starting' with a NAT type from two observers — or the wait is over.
  const end = Date.now() + waitS * 1000;
  const upnpHosts = hasUpnp() ? SPEC.routers.filter((r) => r.upnp === true).flatMap((r) => r.hosts ?? []) : [];
  const settled = (h: string, s: VolunteerNat) =>
    PUBLIC_VOLUNTEERS.includes(h) ? s.reachability === 'public' : h === PULLER ? s.pull : upnpHosts.includes(h) ? s.reachability === 'mapped' : s.reachability !== null && s.reachability !== 'starting' && s.natType !== null && s.natType !== 'unknown';
  for (;;) {
    states = Object.fromEntries([...jn.volunteers.keys()].map((h) => [h, jn.natOf(h)]));
    const pending = Object.entries(states).filter(([h, s]) => !settled(h, s)).map(([h]) => h);
    if (pending.length === 0 || Date.now() > end) {
      progress(pending.length > 0 ? `not settled after ${waitS} s: ${pending.join(', ')}` : `settled after ${Math.round((Date.now() - t0) / 1000)} s`);
      break;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (taskCount > 0) tasks = await crawlBehindNat(taskCount);
  if (taskCount > 0) pullStage = await crawlByPull(PULL_STAGE_CHANNELS);
  states = Object.fromEntries([...jn.volunteers.keys()].map((h) => [h, jn.natOf(h)]));
  for (const c of (await jn.api<{ crawlers: { reachability: string | null }[] }>('/api/crawlers')).body.crawlers) managerView[String(c.reachability)] = (managerView[String(c.reachability)] ?? 0) + 1;
} finally {
  await jn.stop();
}

const nat = natted.map((h) => states[h]!);
const count = (f: (s: VolunteerNat) => boolean) => nat.filter(f).length;
const report = {
  natedVolunteers: natted.length,
  // One way or another: dialled directly, through a relay, or pulling its tasks over its own connection.
  reachable: count((s) => s.reachability === 'public' || s.reachability === 'mapped' || s.reachability === 'relayed' || s.pull),
  mapped: count((s) => s.reachability === 'mapped'),
  holePunched: punchedPairs(),
  relayedOnly: count((s) => s.reachability === 'relayed'),
  pullOnly: count((s) => s.pull),
  tasksPulled: nat.reduce((n, s) => n + s.tasksPulled, 0),
  punchableNats: count((s) => s.natType === 'cone' && !s.pull),
  tasksIssued: tasks.issued,
  tasksCompleted: tasks.succeeded,
  channels: tasks.channels,
  channelsCrawled: tasks.crawled,
  channelsCrawledBehindNat: tasks.crawledBehindNat,
  crawlSeconds: tasks.seconds,
  relayedRttsInVivaldi: null,
  notMeasured: ['relayedRttsInVivaldi'],
  pullStage,
  managerView,
  volunteers: states,
};
if (v.json) process.stdout.write(`${JSON.stringify(report)}\n`);
else {
  process.stdout.write(`${'volunteer'.padEnd(10)} ${'reachability'.padEnd(13)} ${'dht'.padEnd(7)} relays  NAT type   punched  pulled\n`);
  for (const [h, s] of Object.entries(states)) process.stdout.write(`${h.padEnd(10)} ${String(s.pull ? 'pull' : s.reachability).padEnd(13)} ${String(s.dht).padEnd(7)} ${String(s.relays).padEnd(7)} ${String(s.natType ?? '-').padEnd(10)} ${String(s.punched).padEnd(8)} ${s.tasksPulled}\n`);
  if (pullStage !== null) process.stdout.write(`pull stage (every other NATed volunteer paused): ${pullStage.crawledByPuller}/${pullStage.channels} channels crawled by ${PULLER}, which pulls\n`);
  process.stdout.write(`the manager's view: ${Object.entries(managerView).map(([k, n]) => `${n} ${k}`).join(', ')}\n`);
  process.stdout.write(`\n${report.holePunched} pairs hole-punched; ${tasks.crawled}/${tasks.channels} channels crawled (${tasks.crawledBehindNat} behind NAT), ${String(tasks.succeeded)} of ${String(tasks.issued)} tasks succeeded`);
  process.stdout.write(`\n${report.reachable}/${report.natedVolunteers} NATed volunteers reachable (${report.mapped} mapped, ${report.relayedOnly} relayed only, ${report.pullOnly} pulling: ${report.tasksPulled} tasks pulled); ${report.punchableNats} behind NATs a hole punch can pass\n`);
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

/** Unordered pairs of volunteers that logged a punched connection to each other (both ends log one). */
function punchedPairs(): number {
  const pairs = new Set<string>();
  for (const h of jn.volunteers.keys()) {
    const me = jn.volunteers.get(h)!.peerId;
    for (const l of jn.natLines(h)) if (l.msg?.startsWith('hole punched') === true && l.peer !== undefined) pairs.add([me, l.peer].sort().join(' '));
  }
  return pairs.size;
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
