// A full walk ends the route (placement.ts fullWalkEnds; task-protocol.ts
// `walked`): real libp2p nodes on loopback. Crawlers A and B near the host are
// full; A knows B and forwards to it, B knows nobody. C has room but lies
// beyond the spill bound, so the Router tries A, B, C in that order. A's walk
// reached B and came back full: A answers 'full' with `walked`, and with the
// rule on the Router stops there instead of knocking on B (which A's walk has
// just asked) and going on. An answer without `walked` (B's: it walked
// nowhere; an older peer's: it does not say) still tries the next.
// (A lying first candidate: the second describe block, the walk guard.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { PrivateKey } from '@libp2p/interface';
import type { VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { loopbackLibp2p } from '../../testbed/net/loopback.js';
import { CoordService } from '../../src/dht/coord-protocol.js';
import { PeerTable, type Load } from '../../src/dht/peers.js';
import { Router } from '../../src/dht/router.js';
import { replySchema, TASK_PROTOCOL, TASK_REQUEST_MAX_BYTES, TaskReceiver } from '../../src/dht/task-protocol.js';
import { jsonChannel } from '../../src/dht/wire.js';
import { signedTestOrder, type SignedOrder } from './task-order.js';
import { parseTask, type Task } from '../../src/crawler/task.js';
import { at, FULL_PAIR, HOST, full, idle } from './hot-spot-world.js';
import { createRng } from '../../src/rng.js';

// A and B 16–17 ms from the host; C 84 ms, beyond 4 × 16 (the spill bound).
const SPOTS: [number, number][] = [...FULL_PAIR, [80, 8]];
const loadOf = (i: number) => (i < 2 ? full : idle);

interface Crawler {
  node: VolcrawlLibp2p;
  id: string;
  peers: PeerTable;
  taken: Task[];
  offered: number;
}

/** A manager's Router over `peers`: nothing announced, so it falls back to every crawler it knows. */
function routerOver(manager: VolcrawlLibp2p, peers: PeerTable, fullWalkEnds: boolean): Router {
  const coords = new CoordService({ libp2p: manager, peers, crawler: false, rng: createRng(1), lag: false });
  const r = new Router({ libp2p: manager as never, peers, coords, placement: { fullWalkEnds } });
  r.cellLookup.providers = () => Promise.resolve({ ids: [], complete: true });
  r.cellLookup.cached = () => true;
  return r;
}

describe('Router: a walk that came back full ends the route', () => {
  let manager: VolcrawlLibp2p;
  let managerKey: PrivateKey;
  const crawlers: Crawler[] = [];

  beforeAll(async () => {
    managerKey = await generateKeyPair('Ed25519');
    manager = await loopbackLibp2p({ privateKey: managerKey });
    for (const i of SPOTS.keys()) {
      const node = await loopbackLibp2p();
      const peers = new PeerTable();
      const c: Crawler = { node, id: node.peerId.toString(), peers, taken: [], offered: 0 };
      const runner = {
        submit: (t: Task) => {
          c.offered++;
          if (i < 2) return 'full' as const;
          c.taken.push(t);
          return 'accepted' as const;
        },
        load: () => loadOf(i),
      };
      await new TaskReceiver<Task>({ libp2p: node, manager: manager.peerId.toString(), parseTask, runner, peers }).start();
      await manager.dial(node.getMultiaddrs()[0]!);
      crawlers.push(c);
    }
    // A knows B (and can dial it); B and C know nobody.
    const [a, b] = crawlers;
    await a!.node.dial(b!.node.getMultiaddrs()[0]!);
    a!.peers.note(b!.id, { coord: at(...SPOTS[1]!), load: full, crawler: true });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([manager?.stop(), ...crawlers.map((c) => c.node.stop())]);
  });

  function router(fullWalkEnds: boolean): Router {
    const peers = new PeerTable();
    for (const [i, c] of crawlers.entries()) peers.note(c.id, { coord: at(...SPOTS[i]!), load: loadOf(i), crawler: true });
    return routerOver(manager, peers, fullWalkEnds);
  }

  let seq = 0;
  const order = (): Promise<SignedOrder> => signedTestOrder(manager, managerKey, `walk-${++seq}`, { vec: [...HOST], height: 3 });
  const offers = () => crawlers.map((c) => c.offered);

  it('off: A walks to B, B is asked again, C takes it', async () => {
    const before = offers();
    const o = await order();
    const r = await router(false).route(o.envelope, o.order);
    expect(r.ranked).toEqual(crawlers.map((c) => c.id));
    expect(r.status).toBe('accepted');
    expect(r.attempts).toBe(3);
    expect(r.chosen).toBe(crawlers[2]!.id);
    // B was offered the task twice: by A's walk and by the Router.
    expect(offers().map((n, i) => n - before[i]!)).toEqual([1, 2, 1]);
  }, 30_000);

  it("on (the default): A's answer says its walk found the neighbourhood full, and the route ends after one attempt", async () => {
    const before = offers();
    const taken = crawlers[2]!.taken.length;
    const o = await order();
    const r = await router(true).route(o.envelope, o.order);
    expect(r.status).toBe('full');
    expect(r.attempts).toBe(1);
    expect(offers().map((n, i) => n - before[i]!)).toEqual([1, 1, 0]);
    expect(crawlers[2]!.taken.length).toBe(taken);
  }, 30_000);

  it('on: a full answer without a walk (B first: it knows nobody) tries the next candidate', async () => {
    const o = await order();
    const r = await router(true).route(o.envelope, o.order, { exclude: new Set([crawlers[0]!.id]) });
    expect(r.status).toBe('accepted');
    expect(r.attempts).toBe(2);
    expect(r.chosen).toBe(crawlers[2]!.id);
  }, 30_000);

  it('the reply field is optional and must be a boolean', () => {
    expect(replySchema.safeParse({ status: 'full' }).success).toBe(true);
    expect(replySchema.safeParse({ status: 'full', walked: true }).success).toBe(true);
    expect(replySchema.safeParse({ status: 'full', walked: 1 }).success).toBe(false);
    expect(replySchema.safeParse({ status: 'full', walked: 'yes' }).success).toBe(false);
  });
});

// The walk guard (placement.ts mayTryNext `nextHasRoom`): no volunteer is
// trusted. A liar reports room (so it ranks first for the host) and answers
// every order 'full' with `walked`, without forwarding anything. An honest
// crawler H next to it has room. The Router's own copy of H's load decides:
// room (or unknown) → H is tried and takes the task; known full → the liar's
// claim stands uncontradicted and the route ends, as an honest full walk's would.
describe('Router: a lying first candidate cannot end a route the next one can take', () => {
  let manager: VolcrawlLibp2p;
  let managerKey: PrivateKey;
  let liar: VolcrawlLibp2p;
  let honest: VolcrawlLibp2p;
  const taken: Task[] = [];
  let liarOffers = 0;
  /** The load the liar reports beside its claim: full (a consistent liar) unless a test says otherwise. */
  let liarReplyLoad: Load = full;

  beforeAll(async () => {
    managerKey = await generateKeyPair('Ed25519');
    manager = await loopbackLibp2p({ privateKey: managerKey });
    liar = await loopbackLibp2p();
    honest = await loopbackLibp2p();
    // A test-only receiver: reads the order, claims a walk that found the neighbourhood full.
    await liar.handle(TASK_PROTOCOL, async (stream) => {
      const ch = jsonChannel(stream, TASK_REQUEST_MAX_BYTES, 10_000);
      try {
        await ch.read();
        liarOffers++;
        await ch.write({ status: 'full', walked: true, load: liarReplyLoad });
        await ch.close();
      } catch {
        ch.abort('liar stream failed');
      }
    });
    const runner = {
      submit: (t: Task) => {
        taken.push(t);
        return 'accepted' as const;
      },
      load: () => idle,
    };
    await new TaskReceiver<Task>({ libp2p: honest, manager: manager.peerId.toString(), parseTask, runner, peers: new PeerTable() }).start();
    await manager.dial(liar.getMultiaddrs()[0]!);
    await manager.dial(honest.getMultiaddrs()[0]!);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([manager?.stop(), liar?.stop(), honest?.stop()]);
  });

  /** A Router whose table holds the liar (idle: ranked first) and H with `honestLoad` as its last known load. */
  function router(honestLoad: Load | undefined): Router {
    const peers = new PeerTable();
    peers.note(liar.peerId.toString(), { coord: at(...SPOTS[0]!), load: idle, crawler: true });
    peers.note(honest.peerId.toString(), { coord: at(...SPOTS[1]!), ...(honestLoad !== undefined ? { load: honestLoad } : {}), crawler: true });
    return routerOver(manager, peers, true);
  }

  let seq = 0;
  const order = (): Promise<SignedOrder> => signedTestOrder(manager, managerKey, `liar-${++seq}`, { vec: [...HOST], height: 3 });

  it('the next candidate has room by its own load: it is tried and takes the task', async () => {
    const before = { offers: liarOffers, taken: taken.length };
    const o = await order();
    const r = await router(idle).route(o.envelope, o.order);
    expect(r.ranked).toEqual([liar.peerId.toString(), honest.peerId.toString()]);
    expect(r.status).toBe('accepted');
    expect(r.attempts).toBe(2);
    expect(r.chosen).toBe(honest.peerId.toString());
    expect(liarOffers - before.offers).toBe(1);
    expect(taken.length - before.taken).toBe(1);
  }, 30_000);

  it('an unknown load counts as room: the next candidate is tried', async () => {
    const o = await order();
    const r = await router(undefined).route(o.envelope, o.order);
    expect(r.ranked![0]).toBe(liar.peerId.toString());
    expect(r.status).toBe('accepted');
    expect(r.attempts).toBe(2);
    expect(r.chosen).toBe(honest.peerId.toString());
  }, 30_000);

  it('the next candidate is known full: the claim stands and the route ends after the liar', async () => {
    const before = taken.length;
    const o = await order();
    const r = await router(full).route(o.envelope, o.order);
    expect(r.ranked![0]).toBe(liar.peerId.toString());
    expect(r.status).toBe('full');
    expect(r.attempts).toBe(1);
    expect(taken.length).toBe(before);
  }, 30_000);

  it('a claim beside free slots in the same reply is not believed (placement walkClaimed): the next candidate is tried even when known full', async () => {
    liarReplyLoad = idle;
    try {
      const o = await order();
      const r = await router(full).route(o.envelope, o.order);
      expect(r.ranked![0]).toBe(liar.peerId.toString());
      expect(r.status).toBe('accepted');
      expect(r.attempts).toBe(2);
      expect(r.chosen).toBe(honest.peerId.toString());
    } finally {
      liarReplyLoad = full;
    }
  }, 30_000);
});
