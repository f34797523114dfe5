// A light node's bounds under churn, on a real libp2p network (12 volunteers
// on loopback, PlanetLab latencies imposed): its neighbour set and its
// connection count stay within their bounds as peers come and go, departed
// peers leave the neighbour sets, newcomers get measured, and tasks still
// route. The bounds are set below the network's size so that they bind (the
// defaults, 16 neighbours and 48 connections, only bind on bigger networks).
//
// The connection bound is soft (src/dht/connection-trim.ts): connections
// younger than the grace period are never trimmed, and on a network smaller
// than kad-dht's K (20) every announcement dials every node, so a node often
// holds a few young connections beyond the bound. What the trimmer promises,
// and what is asserted, is that connections past their grace period and one
// more trim round stay within the bound, and that the total never reaches
// libp2p's hard bound (soft + headroom).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestNet, waitFor } from '../../testbed/net/harness.js';
import { connectionHeadroom, type VolunteerNode } from '../../src/node/node.js';

const N = 12;
const LATE = 3; // join during the test
const GONE = [3, 4, 5]; // crash during the test
const MAX_CONNECTIONS = 10;
const GRACE_MS = 10_000;
/** The trimmer's round (connection-trim.ts), twice: a connection this much past its grace has been through a trim. */
const SETTLED_MS = GRACE_MS + 2 * 5_000;
// Rotation without its time floor, so newcomers enter older sets within the test.
const NEIGHBOURS = { near: 2, far: 3, rotateEvery: 2, rotateMinMs: 0 };
const SET = NEIGHBOURS.near + NEIGHBOURS.far;

const net = new TestNet({ nodes: N, seed: 23, deferred: LATE, maxConnections: MAX_CONNECTIONS, connectionGraceMs: GRACE_MS, neighbours: NEIGHBOURS, runner: { threads: 2, queue: 2, durationMs: 100 } });
const live = new Set<VolunteerNode>();
/** When the network (or the last churn) began: bounds are judged once its connections could have settled. */
let since = Date.now();

/** Nodes whose neighbour set is not full yet, and why (for a failure message). */
function unfilled(nodes: Iterable<VolunteerNode>): string[] {
  return [...nodes]
    .filter((n) => n.coords.neighbours.size !== SET || n.coords.probesOk === 0)
    .map((n) => `${n.peerId.slice(-6)}: ${n.coords.neighbours.size} neighbours, ${n.peers.crawlers().length} crawlers known, ${n.libp2p.getConnections().length} connections, probes ${n.coords.probesOk} ok / ${n.coords.probesFailed} failed`);
}

async function waitFilled(nodes: () => Iterable<VolunteerNode>, what: string): Promise<void> {
  let last: string[] = [];
  await waitFor(() => (last = unfilled(nodes())).length === 0, 120_000, what).catch(() => {
    throw new Error(`${what}: ${last.join('; ')}`);
  });
}

/** Highest connection count seen on any node (sampled while the test runs). */
let peak = 0;
const sampler = setInterval(() => {
  for (const n of live) peak = Math.max(peak, n.libp2p.getConnections().length);
}, 250);

function overBound(): string[] {
  const out: string[] = [];
  const now = Date.now();
  for (const n of live) {
    const conns = n.libp2p.getConnections();
    const settled = conns.filter((c) => now - c.timeline.open >= SETTLED_MS).length;
    peak = Math.max(peak, conns.length);
    if (settled > MAX_CONNECTIONS || n.coords.neighbours.size > SET) {
      out.push(`${n.peerId.slice(-6)}: ${settled} settled of ${conns.length} connections (${n.libp2p.getPeers().length} peers, ${n.trimmer.trimmed} trimmed so far), ${n.coords.neighbours.size} neighbours`);
    }
  }
  return out;
}

describe(`neighbour set and connection bounds under churn (${N} nodes)`, () => {
  beforeAll(async () => {
    await net.start();
    for (const n of net.nodes) if (n !== undefined) live.add(n);
    since = Date.now();
  }, 300_000);
  afterAll(async () => {
    clearInterval(sampler);
    await net.stop();
  }, 60_000);

  it('every node measures a bounded set of neighbours over a bounded set of connections', async () => {
    await waitFilled(() => live, 'full neighbour sets');
    let last: string[] = [];
    await waitFor(() => Date.now() - since >= SETTLED_MS && (last = overBound()).length === 0, 120_000, `connections within ${MAX_CONNECTIONS}`).catch(() => {
      throw new Error(`over the bounds: ${last.join('; ')}`);
    });
    // The bound binds (without it, DHT queries and probes would reach every
    // peer), and libp2p's hard bound, which turns joiners away, is never reached.
    expect(peak).toBeGreaterThanOrEqual(MAX_CONNECTIONS);
    expect(peak).toBeLessThan(MAX_CONNECTIONS + connectionHeadroom(MAX_CONNECTIONS));
  }, 260_000);

  it('as peers come and go, sets drop the departed, measure the newcomers, and stay within bounds', async () => {
    const gone = GONE.map((i) => net.nodes[i]!);
    const goneIds = new Set(gone.map((n) => n.peerId));
    for (const n of gone) {
      live.delete(n);
      await n.kill();
    }
    const late: VolunteerNode[] = [];
    for (let i = N - LATE; i < N; i++) {
      const n = await net.startNode(i, net.nodes[i - LATE]!);
      late.push(n);
      live.add(n);
    }
    const lateIds = new Set(late.map((n) => n.peerId));
    since = Date.now();
    const holding = () =>
      [...live].flatMap((n) =>
        n.coords.neighbours.members().filter((id) => goneIds.has(id)).map((id) => `${n.peerId.slice(-6)} holds ${id.slice(-6)} (down ${n.peers.get(id)?.down}, connected ${n.libp2p.getConnections().some((c) => c.remotePeer.toString() === id)}, probes ${n.coords.probesOk} ok / ${n.coords.probesFailed} failed)`),
      );
    await waitFor(() => holding().length === 0, 180_000, 'departed peers to leave every neighbour set').catch(() => {
      throw new Error(`departed peers still in neighbour sets: ${holding().join('; ')}`);
    });
    await waitFilled(() => late, 'newcomers to fill their sets');
    await waitFor(() => [...live].some((n) => !lateIds.has(n.peerId) && n.coords.neighbours.members().some((id) => lateIds.has(id))), 180_000, 'a newcomer in an older node\'s set');
    let last: string[] = [];
    await waitFor(() => Date.now() - since >= SETTLED_MS && (last = overBound()).length === 0, 120_000, 'bounds after churn').catch(() => {
      throw new Error(`over the bounds: ${last.join('; ')}`);
    });
    expect(peak).toBeLessThan(MAX_CONNECTIONS + connectionHeadroom(MAX_CONNECTIONS));
    // The network still routes: tasks reach live crawlers and complete.
    for (const h of net.hosts.slice(0, 3)) {
      const r = await net.route(h);
      expect(r.status).toBe('accepted');
      expect(goneIds.has(r.by!)).toBe(false);
      await waitFor(() => net.uploads.some((u) => u.result.taskId === r.order.id && u.result.final), 60_000, 'the routed task to complete');
    }
  }, 600_000);
});
