// The orders bench:routing routes: signed task orders for random hosts, with
// the host's placed coordinate (coordinate routing) or without (hash routing),
// and for --ab-unconfirmed a second router beside the manager's with a twin of
// every coordinate order. Apart from the run because building signed orders
// and the twin's setup are preparation, not measurement.
import { PeerTable, type toWireCoord } from '../../src/dht/peers.js';
import { CoordService } from '../../src/dht/coord-protocol.js';
import { Router } from '../../src/dht/router.js';
import { signOrder, type SignedEnvelope, type TaskOrder } from '../../src/dht/signing.js';
import { UPLOAD_PROTOCOL } from '../../src/dht/upload.js';
import { createRng, deriveSeed, type Rng } from '../../src/rng.js';
import { ROUTER_CACHE_TTL_MS, type BenchNet } from './world.js';

export interface BenchOrder {
  /** The host (dataset node) the order's task is for. */
  h: number;
  order: TaskOrder;
  envelope: SignedEnvelope;
}

/** The router an order goes through and the peer table it ranks on. */
export interface RouteVia {
  router: Router;
  peers: PeerTable;
}

/** `n` signed orders for hosts drawn from `hosts` with `rng`; with `withCoord` each carries its host's placed coordinate. */
export async function makeOrders(net: BenchNet, hosts: number[], placed: Map<number, ReturnType<typeof toWireCoord>>, rng: Rng, n: number, withCoord: boolean, tag: string): Promise<BenchOrder[]> {
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

/**
 * --ab-unconfirmed: the router before session 10 beside ours, in the same
 * network at the same time — a pair that no run-to-run spread (convergence,
 * load) separates. Its table starts as a copy of the manager's (the copies
 * it would rank on), it asks its own info queries, and it reads the same cell
 * answers (one cache: the comparison is of the ranking alone).
 */
export function twinRouter(net: BenchNet, seed: number): RouteVia {
  const peers = new PeerTable();
  for (const p of net.manager.peers.all()) {
    const q = peers.note(p.id, { crawler: p.crawler, ...(p.coord !== undefined ? { coord: p.coord } : {}), ...(p.load !== undefined ? { load: p.load } : {}) });
    q.coordAt = p.coordAt;
    q.down = p.down;
  }
  const coords = new CoordService({ libp2p: net.manager.libp2p, peers, crawler: false, rng: createRng(deriveSeed(seed, 'twin')) });
  const router = new Router({ libp2p: net.manager.libp2p, peers, coords, cacheTtlMs: ROUTER_CACHE_TTL_MS, confirmTop: 0 });
  const shared = net.manager.router.cellLookup;
  router.cellLookup.providers = (c) => shared.providers(c);
  router.cellLookup.cached = (c) => shared.cached(c);
  router.cellLookup.peek = (c) => shared.peek(c);
  return { router, peers };
}

/** The twin of each order: the same host and host coordinate, its own task id. */
export function twinOrders(net: BenchNet, orders: BenchOrder[]): Promise<BenchOrder[]> {
  return Promise.all(
    orders.map(async (o, k) => {
      const task = net.makeTask(o.h, `u${k}-${o.h}`);
      const order: TaskOrder = { ...o.order, id: String(task.id), task };
      return { h: o.h, order, envelope: await signOrder(order, net.manager.key) };
    }),
  );
}
