// The connection trimmer and the peer keeper on real libp2p nodes (loopback):
// trimming closes the least valuable connections and spares what depends on
// the node; kad-dht's keep-alive tag (which made libp2p re-dial every trimmed
// peer at once) does not survive; a node cut off from everyone dials back in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multiaddr } from '@multiformats/multiaddr';
import type { Stream } from '@libp2p/interface';
import type { VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { loopbackLibp2p } from '../../testbed/net/loopback.js';
import { ConnectionTrimmer, KAD_KEEP_ALIVE_TAG } from '../../src/dht/connection-trim.js';
import { PeerKeeper } from '../../src/dht/peer-keeper.js';
import { CoordService } from '../../src/dht/coord-protocol.js';
import { PeerTable } from '../../src/dht/peers.js';
import { TASK_PROTOCOL } from '../../src/dht/task-protocol.js';
import { VivaldiNode } from '../../src/coords/index.js';
import { createRng } from '../../src/rng.js';
import { waitFor } from '../../testbed/net/harness.js';

const newNode = async () => loopbackLibp2p();
const addr = (n: VolcrawlLibp2p) => n.getMultiaddrs()[0]!;

describe('connection trimmer', () => {
  // a trims; b is its manager, c holds a task stream open, d is a neighbour (tagged), e and f are strangers.
  let a: VolcrawlLibp2p, b: VolcrawlLibp2p, c: VolcrawlLibp2p, d: VolcrawlLibp2p, e: VolcrawlLibp2p, f: VolcrawlLibp2p;
  const held: Stream[] = [];
  beforeAll(async () => {
    [a, b, c, d, e, f] = await Promise.all([newNode(), newNode(), newNode(), newNode(), newNode(), newNode()]);
    await c.handle(TASK_PROTOCOL, (s) => void held.push(s));
  });
  afterAll(async () => {
    await Promise.all([a, b, c, d, e, f].map((n) => n.stop()));
  });

  it('closes the least valuable connections down to the bound, sparing the manager, relays and tasks in flight', async () => {
    for (const n of [b, c, d, e, f]) await a.dial(addr(n));
    await a.dialProtocol(c.peerId, TASK_PROTOCOL); // a task in flight to c
    await a.peerStore.merge(d.peerId, { tags: { 'volcrawl-neighbour': { value: 60 } } });
    // f is a relay a holds a reservation on: the relay transport tags it keep-alive.
    await a.peerStore.merge(f.peerId, { tags: { 'keep-alive-circuit-relay': { value: 1 } } });
    const t = new ConnectionTrimmer({ libp2p: a, softMax: 2, graceMs: 0, spare: (p) => p === b.peerId.toString(), busyProtocols: [TASK_PROTOCOL] });
    await t.trim();
    const left = new Set(a.getConnections().map((x) => x.remotePeer.toString()));
    // Excess 3 of 5: e (a stranger) and d (a neighbour, but closable) go; b, c and f are spared.
    expect(left).toEqual(new Set([b, c, f].map((n) => n.peerId.toString())));
    expect(t.trimmed).toBe(2);
  });

  it("drops kad-dht's keep-alive tag, so a trimmed kad-close peer is not re-dialled at once", async () => {
    const t = new ConnectionTrimmer({ libp2p: a, softMax: 10 });
    t.start();
    try {
      await a.peerStore.merge(e.peerId, { tags: { [KAD_KEEP_ALIVE_TAG]: { value: 1 }, 'kad-close': { value: 50 } } });
      await waitFor(async () => !(await a.peerStore.get(e.peerId)).tags.has(KAD_KEEP_ALIVE_TAG), 10_000, 'the keep-alive tag to go');
      expect((await a.peerStore.get(e.peerId)).tags.get('kad-close')?.value).toBe(50);
    } finally {
      t.stop();
    }
  });
});

describe('peer keeper', () => {
  // Node 0 probes every 200 ms; the others only answer (their first round, at
  // start, finds nobody, and the next is an hour away): they may re-dial node 0,
  // but only node 0 marks its crawlers up again (its keeper or its probes).
  const nodes: { libp2p: VolcrawlLibp2p; peers: PeerTable; coords: CoordService }[] = [];
  let trimmer: ConnectionTrimmer;
  beforeAll(async () => {
    for (let i = 0; i < 4; i++) {
      const libp2p = await newNode();
      const peers = new PeerTable();
      const coords = new CoordService({ libp2p, peers, vivaldi: new VivaldiNode({}, createRng(i + 1)), crawler: true, rng: createRng(10 + i), neighbours: { near: 1, far: 2 }, intervalMs: i === 0 ? 200 : 3_600_000 });
      await coords.start();
      nodes.push({ libp2p, peers, coords });
    }
    // As on a volunteer: kad-dht's keep-alive tag goes (else libp2p itself would re-dial kad-close peers).
    trimmer = new ConnectionTrimmer({ libp2p: nodes[0]!.libp2p, softMax: 100 });
    trimmer.start();
  });
  afterAll(async () => {
    trimmer.stop();
    for (const n of nodes) {
      await n.coords.stop();
      await n.libp2p.stop();
    }
  });

  it('a node that lost every connection and marked every crawler down dials back in', async () => {
    const [x, boot, ...rest] = nodes as [(typeof nodes)[0], (typeof nodes)[0], ...(typeof nodes)[0][]];
    for (const n of [boot, ...rest]) await x.libp2p.dial(addr(n.libp2p));
    await waitFor(() => x.peers.crawlers().length === 3, 20_000, 'x to know the three crawlers');
    // Cut off: every connection closed, every crawler marked down (failed probes under load).
    await Promise.all(x.libp2p.getConnections().map((c) => c.close()));
    for (const p of x.peers.all()) x.peers.markDown(p.id);
    expect(x.peers.crawlers()).toHaveLength(0);
    const keeper = new PeerKeeper({
      libp2p: x.libp2p,
      peers: x.peers,
      info: (p) => x.coords.info(p),
      bootstrap: [multiaddr(addr(boot.libp2p).toString())],
      minConnections: 3,
      minCrawlers: 3,
      checkMs: 200,
      rng: createRng(5),
    });
    // The keeper's first refill, at once: cut off as x is, it re-dials the
    // bootstrap peer and asks the crawlers it knew. (Left to the loop's first
    // tick, 200 ms on, it could find nothing to do: a peer may re-dial x within
    // that time, and x's own probes then mark crawlers up.)
    expect(keeper.short()).toBe(true);
    expect(await keeper.refill()).toBeGreaterThan(0);
    expect(x.libp2p.getConnections().some((c) => c.remotePeer.equals(boot.libp2p.peerId))).toBe(true);
    keeper.start();
    try {
      // How many crawlers that refill revived itself varies (a reconnected
      // peer's coordinate request can mark one up first); the loop brings back the rest.
      await waitFor(() => x.peers.crawlers().length === 3 && x.libp2p.getPeers().length >= 3, 20_000, 'x to know and reach the three crawlers again');
    } finally {
      keeper.stop();
    }
  });
});
