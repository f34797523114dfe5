// Coordinates stay honest behind NAT (issue #16): an RTT measured through a
// relay is RTT(a, relay) + RTT(relay, b), not the path's, so it must never
// reach Vivaldi. On loopback (no namespaces needed): A and B have no listener
// of their own (neither can be dialled directly, as behind NAT; nor can DCUtR
// reverse the connection); B holds a reservation on a relay, A reaches it over
// that relay and runs the coordinate protocol as a volunteer does — its
// probing rounds and explicit probes. While the two share only the relayed
// connection no sample is taken (streams that may run on it still flow). A
// node C that B dials directly (as a NATed node probes outward, or after a
// hole punch) takes its samples of B over that direct connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multiaddr } from '@multiformats/multiaddr';
import { createPunchNode, type PunchNode } from '../../testbed/nat/holepunch/node.js';
import { CoordService } from '../../src/dht/coord-protocol.js';
import { PeerTable } from '../../src/dht/peers.js';
import { VivaldiNode } from '../../src/coords/index.js';
import { createRng } from '../../src/rng.js';
import { waitFor } from '../../testbed/net/harness.js';

describe('relayed RTTs never enter Vivaldi', () => {
  let relay: PunchNode;
  let a: PunchNode;
  let b: PunchNode;
  let c: PunchNode;
  let coordsC: CoordService;
  const vivaldiC = new VivaldiNode({}, createRng(4));
  let coordsA: CoordService;
  let coordsB: CoordService;
  const vivaldiA = new VivaldiNode({}, createRng(1));
  const lo = ['/ip4/127.0.0.1/tcp/0'];

  beforeAll(async () => {
    relay = await createPunchNode({ listen: lo, relayServer: true, holePunch: { auto: false } });
    const relayAddr = relay.getMultiaddrs().find((m) => m.toString().startsWith('/ip4/127.0.0.1/tcp/'))!.toString();
    a = await createPunchNode({ listen: [], holePunch: { auto: false } });
    c = await createPunchNode({ listen: lo, holePunch: { auto: false } });
    // B: no listener of its own, only a reservation on the relay.
    b = await createPunchNode({ listen: [], reserve: [relayAddr], holePunch: { auto: false } });
    await waitFor(() => b.getMultiaddrs().some((m) => m.toString().includes('/p2p-circuit')), 60_000, 'B to hold a reservation');
    coordsA = new CoordService({ libp2p: a, peers: new PeerTable(), vivaldi: vivaldiA, crawler: true, rng: createRng(2), intervalMs: 100 });
    // B has a coordinate (a probe's reply carries it; without one there is nothing to learn).
    coordsB = new CoordService({ libp2p: b, peers: new PeerTable(), vivaldi: new VivaldiNode({}, createRng(6)), crawler: true, rng: createRng(3) });
    await coordsB.start();
    await coordsA.start();
    coordsC = new CoordService({ libp2p: c, peers: new PeerTable(), vivaldi: vivaldiC, crawler: true, rng: createRng(5), intervalMs: 100 });
    await coordsC.start();
  }, 90_000);

  afterAll(async () => {
    await coordsA?.stop();
    await coordsB?.stop();
    await coordsC?.stop();
    await Promise.all([a?.stop(), b?.stop(), c?.stop(), relay?.stop()]);
  });

  it('over the relayed connection only: probes fail, no sample; after a direct connection every sample is direct', async () => {
    const circuit = b.getMultiaddrs().find((m) => m.toString().includes('/p2p-circuit'))!;
    const relayed = await a.dial(multiaddr(circuit.toString()));
    expect(relayed.limits).toBeDefined();
    // The relayed connection works for what may run on it (tasks in volcrawl; the test's echo here)…
    const echo = await relayed.newStream('/volcrawl-test/echo/1.0.0', { runOnLimitedConnection: true });
    await echo.close();
    // …but a coordinate probe over it is refused, explicitly and in A's own probing rounds.
    await expect(coordsA.probe(b.peerId.toString())).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 1500));
    expect(a.getConnections(b.peerId).every((c) => c.limits !== undefined)).toBe(true);
    expect(coordsA.samples).toBe(0);
    // The counters nat-check sums on a real run: A's refusals are counted as relayed, no sample over a relay.
    expect(coordsA.relayedProbesRefused).toBeGreaterThan(0);
    expect(coordsA.relayedSamples).toBe(0);
    expect(vivaldiA.coord.error).toBe(new VivaldiNode({}, createRng(1)).coord.error);

    // B dials C directly (outbound works from behind any NAT): C's probes of B succeed, over that connection.
    const direct = await b.dial(c.getMultiaddrs()[0]!);
    expect(direct.limits).toBeUndefined();
    await waitFor(() => c.getConnections(b.peerId).length > 0, 10_000, 'C to register the inbound connection');
    expect(await coordsC.probe(b.peerId.toString())).toBeGreaterThan(0);
    await waitFor(() => coordsC.samples > 0, 30_000, 'a sample over the direct connection');
    expect(c.getConnections(b.peerId).every((x) => x.limits === undefined)).toBe(true);
    // A still has only the relay to B, and still no sample; C's samples are direct ones.
    expect(coordsA.samples).toBe(0);
    expect(coordsC.relayedSamples).toBe(0);
    expect(coordsC.relayedProbesRefused).toBe(0);
  }, 90_000);
});
