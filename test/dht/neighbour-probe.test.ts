// A member new to a node's neighbour set is probed in the round that adds it:
// a crawler the node has heard of but that is gone since (no connection left
// to close, so no disconnect to hear) is dropped from the set and marked down
// at once, and a live one is measured without waiting for a random pick. The
// pace here is one probe a round and one round an hour, so on the old rule
// (the set's random pick only) the first round measures one member of two and
// the gone one may stay for hours.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peerIdFromString } from '@libp2p/peer-id';
import type { VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { loopbackLibp2p } from '../../testbed/net/loopback.js';
import { waitFor } from '../../testbed/net/harness.js';
import { CoordService } from '../../src/dht/coord-protocol.js';
import { PeerTable } from '../../src/dht/peers.js';
import { VivaldiNode, type Coordinate } from '../../src/coords/index.js';
import { createRng } from '../../src/rng.js';

const at = (x: number): Coordinate => ({ vec: Float64Array.from([x, 0]), height: 0, error: 0.3 });

describe('neighbour set: members are probed in the round that adds them', () => {
  let a: VolcrawlLibp2p;
  let live: VolcrawlLibp2p;
  let liveCoords: CoordService;
  let service: CoordService;
  let goneId: string;
  let liveId: string;
  const peers = new PeerTable();

  beforeAll(async () => {
    a = await loopbackLibp2p();
    live = await loopbackLibp2p();
    liveCoords = new CoordService({ libp2p: live, peers: new PeerTable(), vivaldi: new VivaldiNode({}, createRng(3)), crawler: true, rng: createRng(4), lag: false });
    await liveCoords.start();
    // A crawler that was reachable once: its address is in the peer store, then it left.
    const gone = await loopbackLibp2p();
    goneId = gone.peerId.toString();
    await a.peerStore.merge(gone.peerId, { multiaddrs: gone.getMultiaddrs() });
    await gone.stop();
    liveId = live.peerId.toString();
    await a.peerStore.merge(peerIdFromString(liveId), { multiaddrs: live.getMultiaddrs() });
    // Both heard of as crawlers (a DHT answer, a gossip), neither connected now.
    peers.note(goneId, { coord: at(10), crawler: true });
    peers.note(liveId, { coord: at(20), crawler: true });
    expect(a.getConnections()).toHaveLength(0);
    service = new CoordService({
      libp2p: a,
      peers,
      vivaldi: new VivaldiNode({ dimensions: 2 }, createRng(1)),
      crawler: true,
      rng: createRng(2),
      intervalMs: 3_600_000,
      fanout: 1,
      adaptive: { maxIntervalMs: 3_600_000, busyIntervalMs: 3_600_000, warmupSamples: 0 },
      neighbours: { near: 1, far: 1, rotateEvery: 1_000, rotateMinMs: 0 },
      lag: false,
    });
    await service.start();
  });
  afterAll(async () => {
    await service.stop();
    await liveCoords.stop();
    await a.stop();
    await live.stop();
  });

  it('drops a gone member and measures a live one in the first round', async () => {
    await waitFor(() => service.probesOk + service.probesFailed >= 2, 30_000, 'both new members probed in the first round');
    expect(service.probesOk).toBe(1);
    expect(service.probesFailed).toBe(1);
    expect(service.neighbours.members()).toEqual([liveId]);
    expect(peers.get(goneId)?.down).toBe(true);
    expect(peers.get(liveId)?.rttMs).toBeGreaterThanOrEqual(0);
  });
});
