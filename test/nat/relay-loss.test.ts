// A relay lost while it carries a task (issue #16): a full crawler forwards a
// signed order to the crawler nearest the host, a NATed one reachable only
// through a relay; the relay dies after the order crossed it and before the
// answer came back. The sender must not take the order as placed: it marks
// the NATed crawler down and re-routes the order to the next crawler, which
// accepts it (had none, it would answer 'full' and the manager would fail the
// task and issue it again). Real libp2p nodes on loopback; the NATed one has
// no listener of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import type { PrivateKey } from '@libp2p/interface';
import { createPunchNode, type PunchNode } from '../../testbed/nat/holepunch/node.js';
import { waitFor } from '../../testbed/net/harness.js';
import { TASK_PROTOCOL, TaskReceiver, type TaskReply } from '../../src/dht/task-protocol.js';
import { PeerTable } from '../../src/dht/peers.js';
import { signOrder, type TaskOrder } from '../../src/dht/signing.js';
import { UPLOAD_PROTOCOL } from '../../src/dht/upload.js';
import { parseTask, type Task } from '../../src/crawler/task.js';
import { jsonChannel } from '../../src/dht/wire.js';

const lo = ['/ip4/127.0.0.1/tcp/0'];
const coord = (x: number) => ({ vec: Float64Array.from([x, 0]), height: 0, error: 0.1 });
const load = { running: 0, queued: 0, free: 4 };

describe('a relay lost while it carries a task', () => {
  let relay: PunchNode;
  let natted: PunchNode;
  let other: PunchNode;
  let sender: PunchNode;
  let managerKey: PrivateKey;
  let manager: string;
  const arrived: unknown[] = [];
  const taken: Task[] = [];

  beforeAll(async () => {
    managerKey = await generateKeyPair('Ed25519');
    manager = peerIdFromPrivateKey(managerKey).toString();
    relay = await createPunchNode({ listen: lo, relayServer: true, holePunch: { auto: false } });
    const relayAddr = relay.getMultiaddrs().find((m) => m.toString().startsWith('/ip4/127.0.0.1/tcp/'))!.toString();
    natted = await createPunchNode({ listen: [], reserve: [relayAddr], holePunch: { auto: false } });
    other = await createPunchNode({ listen: lo, holePunch: { auto: false } });
    sender = await createPunchNode({ listen: lo, holePunch: { auto: false } });
    await waitFor(() => natted.getMultiaddrs().some((m) => m.toString().includes('/p2p-circuit')), 60_000, 'the NATed crawler to hold a reservation');
    // The NATed crawler reads the order; then its relay goes away, before any answer.
    await natted.handle(
      TASK_PROTOCOL,
      async (stream) => {
        const ch = jsonChannel(stream, 2 * 1024 * 1024, 30_000);
        arrived.push(await ch.read());
        await relay.stop();
      },
      { runOnLimitedConnection: true },
    );
    // The next crawler takes what it is given.
    const otherReceiver = new TaskReceiver<Task>({ libp2p: other, manager, parseTask, runner: { submit: (t) => (taken.push(t), 'accepted'), load: () => load }, peers: new PeerTable() });
    await otherReceiver.start();
  }, 90_000);

  afterAll(async () => {
    await Promise.all([natted?.stop(), other?.stop(), sender?.stop(), relay?.stop()]);
  });

  it('the sender sees no answer, marks the NATed crawler down and re-routes the order to the next crawler', async () => {
    // The sender knows both crawlers: the NATed one nearest the host (through its relay address), the other farther.
    const circuit = natted.getMultiaddrs().find((m) => m.toString().includes('/p2p-circuit'))!;
    expect((await sender.dial(multiaddr(circuit.toString()))).limits).toBeDefined();
    await sender.dial(other.getMultiaddrs()[0]!);
    const peers = new PeerTable();
    peers.note(natted.peerId.toString(), { crawler: true, coord: coord(1), load });
    peers.note(other.peerId.toString(), { crawler: true, coord: coord(50), load });
    // The sender is full itself: it forwards (the paper's forwarding-based scheduling).
    const receiver = new TaskReceiver<Task>({ libp2p: sender, manager, parseTask, runner: { submit: () => 'full', load: () => ({ running: 4, queued: 0, free: 0 }) }, peers, coord: () => coord(0) });
    const now = Date.now();
    const task = { id: 'relay-loss-1', scope: { origin: 'http://a.test', pathPrefixes: ['/'] }, seeds: ['http://a.test/'], maxDepth: 0, deadline: now + 600_000 };
    const order: TaskOrder = {
      v: 1,
      id: task.id,
      issuer: manager,
      issuedAt: now,
      expiresAt: now + 600_000,
      host: 'a.test',
      hostCoord: { vec: [0, 0], height: 0 },
      storage: { peer: manager, protocol: UPLOAD_PROTOCOL, addrs: [] },
      task,
    };
    const reply: TaskReply = await receiver.handle({ envelope: await signOrder(order, managerKey), hops: 0 }, manager);

    expect(arrived).toHaveLength(1); // the order did cross the relay
    expect(relay.status).toBe('stopped');
    expect(reply.status).toBe('accepted');
    expect(reply.by).toBe(other.peerId.toString());
    expect(taken.map((t) => t.id)).toEqual([task.id]);
    expect(peers.get(natted.peerId.toString())?.down).toBe(true);
    expect(receiver.forwarded).toBe(1);
  }, 120_000);
});
