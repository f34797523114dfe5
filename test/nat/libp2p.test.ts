// What libp2p 3's own NAT-traversal parts do in the NAT test network — the
// facts docs/nat.md builds phase 2 on, kept true as libp2p versions move.
// Plain libp2p nodes (testbed/nat/spike/peer.ts) in real namespaces behind
// real nftables NAT; every claim is read from the events the nodes printed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatNet } from '../../testbed/nat/network.js';
import { namespaceSupport } from '../../testbed/nat/netns.js';
import { SpikePeers, type PeerEvent } from '../../testbed/nat/spike/peers.js';

const unsupported = namespaceSupport();
if (unsupported !== null) console.warn(`test/nat skipped: ${unsupported}`);

const TCP = '/ip4/0.0.0.0/tcp/4001';
const RELAY_DATA_BYTES = 65_536;

describe.skipIf(unsupported !== null)('libp2p 3 NAT traversal in the NAT test network', () => {
  let net: NatNet;
  let peers: SpikePeers;
  let manager: string;
  const isPublicAddr = (a: string) => !a.includes('/p2p-circuit') && !/^\/ip4\/(127|192\.168|100\.64)\./.test(a);
  const hasMode = (mode: string) => (e: PeerEvent) => e.ev === 'dht-mode' && e.mode === mode;

  beforeAll(async () => {
    net = NatNet.build();
    peers = new SpikePeers(net);
    // The manager: relay server with small limits (2 reservations, 64 KiB per relayed connection), AutoNAT v2.
    peers.start('manager', ['--listen', TCP, '--relay-server', '--max-reservations', '2', '--relay-data-bytes', String(RELAY_DATA_BYTES), '--autonat', 'v2', '--dcutr', '--dht', 'auto']);
    manager = await peers.tcpAddr('manager');
    for (const p of ['pub1', 'pub2']) peers.start(p, ['--listen', TCP, '--autonat', 'v2', '--dcutr', '--dht', 'auto', '--dial', manager]);
    for (const n of ['nat1', 'nat3']) peers.start(n, ['--listen', TCP, '--relay-client', '--autonat', 'v2', '--dcutr', '--dht', 'auto', '--dial', manager]);
  }, 120_000);

  afterAll(async () => {
    await peers?.stopAll();
    await net?.destroy();
  });

  it('AutoNAT v2 confirms a public TCP address and kad-dht turns server; a NATed node has only private and relay addresses and stays client', async () => {
    const pubAddr = `/ip4/${net.host('pub1').ip}/tcp/4001`;
    await peers.waitFor('pub1', (e) => e.ev === 'self' && (e.addrs as string[]).includes(pubAddr), 'its public address confirmed', 90_000);
    await peers.waitFor('pub1', hasMode('server'), 'kad-dht server mode', 30_000);
    await peers.waitFor('nat1', (e) => e.ev === 'self' && (e.addrs as string[]).some((a) => a.includes('/p2p-circuit')), 'a relay address', 60_000);
    const nat1 = peers.of('nat1');
    expect(nat1.filter((e) => e.ev === 'self').flatMap((e) => e.addrs as string[]).filter(isPublicAddr)).toEqual([]);
    expect(nat1.some(hasMode('server'))).toBe(false);
  }, 180_000);

  it('a public peer reaches a NATed one through its relay address (a limited connection), and DCUtR reverses it into a direct connection', async () => {
    await peers.waitFor('nat1', () => peers.circuitAddr('nat1') !== undefined, 'a relay address');
    const target = peers.circuitAddr('nat1')!;
    // A second public peer that dials only once AutoNAT has confirmed its own address (the reversal dials that address).
    peers.start('pub2', ['--listen', '/ip4/0.0.0.0/tcp/4002', '--autonat', 'v2', '--dcutr', '--dial', manager, '--dial-when-public', '--dial-later', target], 'pub2>nat1');
    const nat1Id = await peers.peerId('nat1');
    const dialed = await peers.waitFor('pub2>nat1', (e) => e.ev === 'dialed' && String(e.remote).endsWith(nat1Id), 'the relayed dial', 90_000);
    expect(dialed.limited, JSON.stringify(dialed)).toBe(true);
    expect(String(dialed.remote)).toContain('/p2p-circuit/');
    const direct = await peers.waitFor('pub2>nat1', (e) => e.ev === 'conn-open' && e.dir === 'inbound' && e.limited === false && String(e.remote).startsWith(`/ip4/${net.publicIpOf('nat1')}/tcp/`), 'a direct inbound connection from the NATed peer', 60_000);
    expect(String(direct.remote)).toContain(nat1Id);
  }, 180_000);

  it('the relay refuses a reservation beyond its limit and cuts a relayed connection at its data limit', async () => {
    await peers.waitFor('nat3', () => peers.circuitAddr('nat3') !== undefined, 'a relay address', 60_000);
    // Both reservation slots are taken (nat1, nat3): a third peer that insists on this relay cannot start.
    const third = peers.start('nat2', ['--listen', TCP, '--listen', `${manager}/p2p-circuit`]);
    await third.exited;
    expect(third.exitStatus).not.toBe('exit code 0');
    expect(third.output()).toMatch(/RESERVATION_REFUSED/);

    // 1 MiB from behind the CGN to nat1 over the relay: no DCUtR (both are NATed), so it stays relayed and is cut.
    peers.start('nat3', ['--listen', '/ip4/0.0.0.0/tcp/4002', '--dial-later', peers.circuitAddr('nat1')!, '--send-bytes', String(1 << 20)], 'nat3>nat1');
    const sent = await peers.waitFor('nat3>nat1', (e) => e.ev === 'sent' || e.ev === 'send-failed' || e.ev === 'dial-failed', 'the end of the transfer', 60_000);
    expect(sent.ev, JSON.stringify(sent)).toBe('send-failed');
    const received = await peers.waitFor('nat1', (e) => e.ev === 'sink-done' || e.ev === 'sink-reset', 'the end of the transfer at the receiver', 30_000);
    expect(received.bytes as number).toBeLessThan(RELAY_DATA_BYTES);
  }, 180_000);
});
