// The NAT spike's driver: builds the NAT test network and runs plain libp2p 3
// nodes (spike/peer.ts) in it, printing what each one reported. The findings
// and these runs' output are in docs/nat.md.
//
//   node bin/run-ts.js testbed/nat/spike/run.ts <scenario>
//
// scenarios:
//   traversal  AutoNAT v2 + relay server on the manager, AutoNAT v2 on two public
//              volunteers, relay clients + DCUtR behind the cone, symmetric and
//              CGN NATs, kad-dht without a fixed mode; then NATed and public
//              peers dial each other's relay addresses
//   autonat1   the same with AutoNAT v1 (its dial-back closes the connection
//              the request came on: reservations are lost)
//   limits     relay limits: 2 reservations on the relay, a 3rd refused; a
//              relayed transfer above the data limit is cut
//   dht        kad-dht with no clientMode: the mode each node ends in
//   quic       traversal with QUIC beside TCP (needs `npm install --no-save
//              @chainsafe/libp2p-quic@2.1.1`): does DCUtR punch through the cone NATs?
//   failover   two relays (the manager and pub1); the one nat1 reserved on is
//              SIGKILLed: does nat1 reserve on the other by itself, and how fast?
//   upnp       a home router running miniupnpd: @libp2p/upnp-nat maps the port,
//              AutoNAT v2 verifies it, a public peer dials the mapped address
import { DEFAULT_SPEC, NatNet, type NatNetSpec } from '../network.js';
import { SpikePeers } from './peers.js';

const TCP = '/ip4/0.0.0.0/tcp/4001';

const scenario = process.argv[2] ?? 'traversal';
const UPNP_SPEC: NatNetSpec = { public: ['manager', 'pub1', 'pub2'], routers: [{ name: 'home1', nat: 'cone', hosts: ['nat1'], upnp: true }] };
const net = NatNet.build(scenario === 'upnp' ? UPNP_SPEC : DEFAULT_SPEC);
const peers = new SpikePeers(net);
const events = peers.events;

/** Starts a peer in `host` (its output goes to $SPIKE_LOGS/<key>.log when that is set). */
const start = (host: string, args: string[], key = host) =>
  peers.start(host, args, key, process.env.SPIKE_LOGS === undefined ? {} : { logFile: `${process.env.SPIKE_LOGS}/${key.replace('>', '-to-')}.log` });
const peerIdOf = (key: string) => peers.peerId(key);
const addrOf = (host: string) => peers.tcpAddr(host);
const circuitAddr = (key: string) => peers.circuitAddr(key);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(what: string, pred: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (pred()) return true;
    await sleep(200);
  }
  console.log(`(gave up waiting for ${what} after ${ms} ms)`);
  return false;
}

function report(): void {
  for (const [key, evs] of events) {
    const host = key.split('>')[0]!;
    const router = net.hosts.get(host)?.router;
    const where = router !== undefined ? `behind ${router} (${net.routers.get(router)!.nat})` : 'public';
    console.log(`\n== ${key} (${net.host(host).ip}, ${where})`);
    for (const e of evs) console.log(`  ${JSON.stringify(e)}`);
  }
}

async function traversal(autonat: string, quic = false): Promise<void> {
  const q = quic ? ['--quic'] : [];
  start('manager', ['--listen', TCP, '--relay-server', '--autonat', autonat, '--dcutr', '--dht', 'auto', ...q]);
  const manager = await addrOf('manager');
  for (const p of ['pub1', 'pub2']) start(p, ['--listen', TCP, '--autonat', autonat, '--dcutr', '--dht', 'auto', '--dial', manager, ...q]);
  for (const n of ['nat1', 'nat2', 'nat3']) start(n, ['--listen', TCP, '--relay-client', '--autonat', autonat, '--dcutr', '--dht', 'auto', '--dial', manager, ...q]);
  await until('relay addresses on the NATed peers', () => ['nat1', 'nat2', 'nat3'].every((n) => circuitAddr(n) !== undefined), 30_000);
  await sleep(3000);
  // Relayed dials: cone→cone (CGN), cone→symmetric, public→cone (DCUtR's unilateral "connection reversal").
  // The public dialer waits until AutoNAT has verified its own address (DCUtR's
  // unilateral upgrade needs the dialer's public address in the peer store).
  const dials: [string, string][] = [['nat3', 'nat1'], ['nat1', 'nat2'], ['pub1', 'nat1']];
  for (const [from, to] of dials) {
    const target = circuitAddr(to);
    console.log(`-- ${from} dials ${to} at ${target}`);
    const when = from.startsWith('pub') ? ['--dial-when-public'] : ['--dial-after', '2000'];
    if (target !== undefined) start(from, [...(quic ? ['--quic'] : []), '--listen', '/ip4/0.0.0.0/tcp/4002', '--dcutr', '--autonat', autonat, '--dial', manager, ...when, '--dial-later', target, '--ping-every', '5000'], `${from}>${to}`);
    await sleep(25_000);
  }
}

async function limits(): Promise<void> {
  start('manager', ['--listen', TCP, '--relay-server', '--max-reservations', '2', '--relay-data-bytes', '65536', '--relay-duration-ms', '30000', '--announce', `/ip4/${net.host('manager').ip}/tcp/4001`]);
  const manager = await addrOf('manager');
  for (const n of ['nat1', 'nat2', 'nat3']) {
    start(n, ['--listen', TCP, '--listen', `${manager}/p2p-circuit`]);
    await sleep(2500);
  }
  await until('two reservations', () => ['nat1', 'nat2', 'nat3'].filter((n) => circuitAddr(n) !== undefined).length >= 2, 20_000);
  const target = circuitAddr('nat1') ?? circuitAddr('nat2');
  if (target === undefined) return;
  start('pub1', ['--listen', TCP, '--dial-later', target, '--send-bytes', String(1 << 20)]);
  await sleep(15_000);
}

async function dht(): Promise<void> {
  start('manager', ['--listen', TCP, '--autonat', 'v1', '--dht', 'auto']);
  const manager = await addrOf('manager');
  start('pub1', ['--listen', TCP, '--autonat', 'v1', '--dht', 'auto', '--dial', manager]);
  start('nat1', ['--listen', TCP, '--autonat', 'v1', '--dht', 'auto', '--dial', manager]);
  start('pub2', ['--listen', TCP, '--dht', 'auto', '--dial', manager]);
  await sleep(20_000);
}

async function failover(): Promise<void> {
  start('manager', ['--listen', TCP, '--relay-server', '--autonat', 'v2', '--dht', 'auto']);
  const manager = await addrOf('manager');
  start('pub1', ['--listen', TCP, '--relay-server', '--autonat', 'v2', '--dht', 'auto', '--dial', manager]);
  const pub1 = await addrOf('pub1');
  start('pub2', ['--listen', TCP, '--autonat', 'v2', '--dht', 'auto', '--dial', manager, '--dial', pub1]);
  start('nat1', ['--listen', TCP, '--relay-client', '--autonat', 'v2', '--dht', 'auto', '--dial', manager, '--dial', pub1]);
  await until('a relay address on nat1', () => circuitAddr('nat1') !== undefined, 30_000);
  const first = circuitAddr('nat1')!;
  const used = first.includes(await peerIdOf('manager')) ? 'manager' : 'pub1';
  console.log(`-- nat1 reserved on ${used}: ${first}; SIGKILL ${used} at t=${Date.now()}`);
  const killedAt = Date.now();
  await peers.procs.get(used)!.kill('SIGKILL');
  const replaced = await until('a relay address on the other relay', () => circuitAddr('nat1') !== undefined && circuitAddr('nat1') !== first && !circuitAddr('nat1')!.includes(first.split('/p2p-circuit')[0]!), 120_000);
  console.log(`-- replaced: ${replaced} after ${Date.now() - killedAt} ms: ${circuitAddr('nat1')}`);
}

async function upnp(): Promise<void> {
  start('manager', ['--listen', TCP, '--autonat', 'v2']);
  const manager = await addrOf('manager');
  for (const p of ['pub1', 'pub2']) start(p, ['--listen', TCP, '--autonat', 'v2', '--dial', manager]);
  start('nat1', ['--listen', TCP, '--upnp', '--autonat', 'v2', '--dht', 'auto', '--dial', manager, '--dial-after', '8000', '--dial-later', `/ip4/${net.host('pub1').ip}/tcp/4001/p2p/${await peerIdOf('pub1')}`]);
  const mapped = (): string | undefined => peers.selfAddrs('nat1').find((a) => a.startsWith(`/ip4/${net.routers.get('home1')!.wanIp}/`));
  await until('a mapped address on nat1', () => mapped() !== undefined, 30_000);
  console.log('-- miniupnpd:', net.daemonLog('home1').join('\n   '));
  console.log('-- router rules:', net.exec('home1', 'nft', ['list', 'table', 'inet', 'vcn_upnp']));
  const addr = mapped();
  if (addr !== undefined) start('pub2', ['--listen', '/ip4/0.0.0.0/tcp/4002', '--dial', `${addr}/p2p/${await peerIdOf('nat1')}`], 'pub2>nat1');
  await sleep(8000);
}

try {
  if (scenario === 'traversal') await traversal('v2');
  else if (scenario === 'autonat1') await traversal('v1');
  else if (scenario === 'quic') await traversal('v2', true);
  else if (scenario === 'limits') await limits();
  else if (scenario === 'dht') await dht();
  else if (scenario === 'upnp') await upnp();
  else if (scenario === 'failover') await failover();
  else throw new Error(`unknown scenario ${scenario}`);
} finally {
  report();
  await net.destroy(3000);
}
