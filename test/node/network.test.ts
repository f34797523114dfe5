// The local test network: 20 real libp2p volunteers on loopback with the
// PlanetLab latencies imposed on coordinate probes. No timing assertions: every
// wait is on a condition with a generous bound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id';
import { lpStream } from '@libp2p/utils';
import { embedMatrix, embeddingError, type Coordinate } from '../../src/coords/index.js';
import { sendTask, TASK_PROTOCOL, TASK_REQUEST_MAX_BYTES } from '../../src/dht/task-protocol.js';
import { checkHandoverChain, signOrder } from '../../src/dht/signing.js';
import { TestNet, waitFor } from '../../testbed/net/harness.js';
import type { FakeRunner } from '../../testbed/net/fake-runner.js';

const N = 20;
const FORWARD = 5; // tiny capacity, tasks never finish
const KILLED = 6;
const GRACEFUL = 7;
const VICTIM = 8; // receives forged/oversized orders

const net = new TestNet({
  nodes: N,
  seed: 11,
  // The shipped pace backs off to 30 s gaps once samples agree; converging 20
  // nodes to 1.5x the offline error then took 432 s of this file's 532 s on a
  // quiet machine. Capping the gap at 3 s tests the same protocol, faster.
  coordPace: { maxIntervalMs: 3_000 },
  runner: (i) =>
    i === FORWARD ? { threads: 1, queue: 0, hold: true }
    : i === KILLED || i === GRACEFUL ? { threads: 4, queue: 4, hold: true }
    : { threads: 3, queue: 3, durationMs: 200 },
});

function liveError(): number {
  const coords: Coordinate[] = Array.from({ length: net.matrix.n }, () => net.coord(0));
  net.index.forEach((d, i) => (coords[d] = net.coord(i)));
  return embeddingError(coords, net.matrix, net.index).median;
}

// A task given back unfinished ends 'cancelled': that is not done.
const done = (id: string) => net.uploads.find((u) => u.result.taskId === id && u.result.final && u.result.status !== 'cancelled');

// The placement policy may choose any crawler with room, including the three
// test-specific ones that hold their tasks and never upload (random peer IDs
// make that differ between runs: hash routing landed on one in a CI run).
const HOLDERS = [FORWARD, KILLED, GRACEFUL];
const nodeIndex = (peer: string | undefined) => net.nodes.findIndex((n) => n?.peerId === peer);

/** Waits for the task's result; if the crawler that accepted it is one that holds tasks, checks it holds it instead. Returns whether a result came. */
async function completes(by: string | undefined, id: string, timeoutMs: number, what: string): Promise<boolean> {
  const i = nodeIndex(by);
  if (HOLDERS.includes(i)) {
    expect(net.nodes[i]!.heldTasks()).toContain(id);
    return false;
  }
  await waitFor(() => done(id) !== undefined, timeoutMs, what);
  return true;
}

describe('test network (20 nodes, imposed PlanetLab latencies)', () => {
  beforeAll(async () => {
    await net.start();
  }, 300_000);
  afterAll(() => net.stop(), 60_000);

  it('nodes join through one bootstrap and find each other', async () => {
    await waitFor(() => net.nodes.every((n) => n.peers.crawlers().length >= N - 3), 180_000, 'every node to know most crawlers');
    // DHT peer routing works between nodes that never dialled each other directly.
    const a = net.nodes[N - 1]!;
    const b = net.nodes[1]!;
    const info = await a.libp2p.peerRouting.findPeer(peerIdFromString(b.peerId), { signal: AbortSignal.timeout(30_000) });
    expect(info.id.toString()).toBe(b.peerId);
    expect(net.nodes.every((n) => n.libp2p.services.dht.getMode() === 'server')).toBe(true);
  }, 200_000);

  it('live coordinates converge to within 1.5x of the offline embedding', async () => {
    const offline = embedMatrix(net.matrix, { nodes: net.index, seed: 3, rounds: 2000 });
    const target = embeddingError(offline, net.matrix, net.index).median;
    let last = Infinity;
    try {
      await waitFor(() => (last = liveError()) <= 1.5 * target, 480_000, 'convergence', 2000);
    } catch {
      throw new Error(`live median relative error ${last.toFixed(3)} > 1.5 × offline ${target.toFixed(3)} after 480 s`);
    }
    expect(last).toBeLessThanOrEqual(1.5 * target);
    console.log(`coordinates: live median relative error ${last.toFixed(3)}, offline ${target.toFixed(3)}`);
  }, 540_000);

  it('every crawler announces its cells', async () => {
    await waitFor(() => net.nodes.every((n) => n.announcer.announcements > 0), 180_000, 'announcements');
  }, 200_000);

  it('a task reaches the crawler nearest its host', async () => {
    const alive = (i: number) => i !== FORWARD && i !== KILLED && i !== GRACEFUL;
    const hosts = net.hosts.filter((h) => alive(net.nearest(h).i)).slice(0, 12);
    let exact = 0;
    const stretch: number[] = [];
    for (const h of hosts) {
      const r = await net.route(h);
      expect(r.status).toBe('accepted');
      const i = net.nodes.findIndex((n) => n.peerId === r.chosen);
      const best = net.nearest(h);
      if (i === best.i) exact++;
      stretch.push(net.rtt(h, net.index[i]!) / best.rtt);
      // Crawlers with normal runners finish and upload (the test-specific ones hold tasks).
      const holder = net.nodes.findIndex((n) => n.peerId === r.by);
      if (alive(holder)) await waitFor(() => done(r.order.id) !== undefined, 60_000, 'upload of the result');
    }
    stretch.sort((a, b) => a - b);
    // Baseline: a crawler picked at random (the median over crawlers, per host).
    const random = hosts
      .map((h) => {
        const best = net.nearest(h, alive).rtt;
        const r = net.index.filter((_, i) => alive(i)).map((d) => net.rtt(h, d) / best).sort((a, b) => a - b);
        return r[Math.floor(r.length / 2)]!;
      })
      .sort((a, b) => a - b);
    const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
    console.log(`nearest: ${exact}/${hosts.length} exact, stretch ${stretch.map((s) => s.toFixed(2)).join(' ')}; random choice median ${median(random).toFixed(2)}`);
    // Vivaldi's ~7% error on each of two predictions cannot order crawlers whose
    // RTTs to the host differ by less than ~15% (exact hits varied 2–6 of 12
    // between runs), so "the nearest" is judged at that resolution: often within
    // 15% of the nearest, mostly within 1.5×, and far better than chance.
    expect(stretch.filter((x) => x <= 1.15).length).toBeGreaterThanOrEqual(Math.ceil(hosts.length / 4));
    expect(stretch.filter((x) => x <= 1.5).length).toBeGreaterThanOrEqual(Math.ceil(hosts.length / 3));
    expect(median(stretch)).toBeLessThan(median(random) / 2);
  }, 180_000);

  it('routes hosts without a coordinate by a hash of the host name, and results carry the RTT measured to the host', async () => {
    // Hash routing ignores coordinates; a task can land on a node that holds
    // tasks, so try hosts until one lands on a crawler that finishes it.
    let checked = false;
    for (const h of net.hosts.slice(40, 46)) {
      const r = await net.route(h, { coord: false });
      expect(r.status).toBe('accepted');
      expect(r.level).toBe(-1);
      if (!(await completes(r.by, r.order.id, 30_000, 'upload'))) continue;
      const u = done(r.order.id)!;
      expect(u.host).toBe(net.hostName(h));
      expect(u.hostRttMs).toBeTypeOf('number');
      expect(u.crawlerCoord?.vec.length).toBeGreaterThan(0);
      checked = true;
      break;
    }
    expect(checked).toBe(true);
  }, 90_000);

  it('a full queue forwards to a less loaded crawler nearby', async () => {
    const target = net.nodes[FORWARD]!;
    // Fill its single slot (an earlier test may already have).
    const first = await net.order(net.hosts[50]!);
    expect((await sendTask(net.manager.libp2p, target.peerId, first.envelope)).status).toBe('accepted');
    expect(target.runner.load().free).toBe(0);
    const before = target.receiver.forwarded;
    const second = await net.order(net.hosts[51]!);
    const reply = await sendTask(net.manager.libp2p, target.peerId, second.envelope);
    expect(reply.status).toBe('accepted');
    expect(reply.by).toBeDefined();
    expect(reply.by).not.toBe(target.peerId);
    expect(target.receiver.forwarded).toBe(before + 1);
    // (Forwarding may pick a crawler nearby that holds its tasks.)
    if (await completes(reply.by, second.order.id, 60_000, 'forwarded task done')) expect(done(second.order.id)!.crawler).toBe(reply.by);
    // With hops exhausted a full node says so instead of forwarding.
    const third = await net.order(net.hosts[52]!);
    expect((await sendTask(net.manager.libp2p, target.peerId, third.envelope, 3)).status).toBe('full');
  }, 60_000);

  it("a killed node's tasks are never acknowledged as done", async () => {
    const k = net.nodes[KILLED]!;
    const ids: string[] = [];
    for (const h of net.hosts.slice(60, 63)) {
      const o = await net.order(h);
      expect((await sendTask(net.manager.libp2p, k.peerId, o.envelope)).status).toBe('accepted');
      ids.push(o.order.id);
    }
    // (It may also hold a task an earlier routing test sent it: it never finishes any.)
    expect(k.heldTasks()).toEqual(expect.arrayContaining(ids));
    await k.kill();
    // Route fresh tasks near the dead node: they must go elsewhere and complete.
    const hosts = net.hosts.filter((h) => net.nearest(h).i === KILLED).slice(0, 2);
    for (const h of hosts) {
      const r = await net.route(h);
      expect(r.status).toBe('accepted');
      expect(r.by).not.toBe(k.peerId);
      await completes(r.by, r.order.id, 30_000, 'rerouted task');
    }
    await new Promise((r) => setTimeout(r, 2000));
    for (const id of ids) expect(net.uploads.some((u) => u.result.taskId === id)).toBe(false);
  }, 90_000);

  it("a gracefully stopped node's tasks are migrated and completed elsewhere", async () => {
    const g = net.nodes[GRACEFUL]!;
    const ids: string[] = [];
    for (const h of net.hosts.slice(70, 74)) {
      const o = await net.order(h);
      expect((await sendTask(net.manager.libp2p, g.peerId, o.envelope)).status).toBe('accepted');
      ids.push(o.order.id);
    }
    const { migrated, lost } = await g.shutdown(40_000);
    expect(lost).toEqual([]);
    // (It may also hold tasks that earlier tests routed to it.)
    expect(migrated).toEqual(expect.arrayContaining(ids));
    await waitFor(() => ids.every((id) => done(id) !== undefined), 60_000, 'migrated tasks completed');
    for (const id of ids) expect(done(id)!.crawler).not.toBe(g.peerId);
    // Each upload carries the hand-over signed by the stopped node (and by any crawler
    // that forwarded it on), which the manager's storage checks before accepting it.
    for (const id of ids) {
      const u = done(id)!;
      expect(u.handover?.[0]?.from).toBe(g.peerId);
      expect(await checkHandoverChain(u.handover!, id, g.peerId, u.crawler)).toBeUndefined();
    }
    // Its goodbye reached the others: nobody routes to it any more.
    await waitFor(() => net.nodes.filter((n, i) => i !== GRACEFUL && i !== KILLED).every((n) => n.peers.get(g.peerId)?.down !== false), 90_000, 'goodbye');
  }, 180_000);

  it('forged, unsigned, foreign, malformed and oversized tasks are rejected', async () => {
    const v = net.nodes[VICTIM]!;
    const runner = net.runners[VICTIM] as FakeRunner;
    const before = runner.submitted.length;
    const other = await generateKeyPair('Ed25519');
    const h = net.hosts[80]!;
    // Forged: claims the manager as issuer, signed by another key.
    const forged = await net.order(h, { key: other });
    const r1 = await sendTask(net.manager.libp2p, v.peerId, forged.envelope);
    expect(r1.status).toBe('rejected');
    expect(r1.reason).toMatch(/signature/);
    // Unsigned.
    const unsigned = { payload: forged.envelope.payload, sig: 'AAAA' };
    expect((await sendTask(net.manager.libp2p, v.peerId, unsigned)).status).toBe('rejected');
    // Properly signed by someone who is not the manager.
    const foreign = await net.order(h, { key: other, issuer: peerIdFromPrivateKey(other).toString() });
    expect((await sendTask(net.manager.libp2p, v.peerId, foreign.envelope)).reason).toMatch(/not the manager/);
    // Signed by the manager but an invalid task (ftp seed).
    const bad = await net.order(h, { task: { ...net.makeTask(h), seeds: ['ftp://x/'] } });
    expect((await sendTask(net.manager.libp2p, v.peerId, bad.envelope)).status).toBe('rejected');
    // Malformed request.
    const good = await net.order(h);
    const malformed = await signOrder({ ...good.order, storage: { peer: 'x', protocol: 'nope' } }, net.manager.key);
    expect((await sendTask(net.manager.libp2p, v.peerId, malformed)).status).toBe('rejected');
    // Oversized: a length prefix beyond the cap.
    const stream = await net.manager.libp2p.dialProtocol(peerIdFromString(v.peerId), TASK_PROTOCOL);
    const lp = lpStream(stream, { maxDataLength: 8 * 1024 * 1024 });
    let status = 'stream-error';
    try {
      await lp.write(new Uint8Array(TASK_REQUEST_MAX_BYTES + 10).fill(0x20), { signal: AbortSignal.timeout(10_000) });
      const reply = JSON.parse(new TextDecoder().decode((await lp.read({ signal: AbortSignal.timeout(10_000) })).subarray())) as { status: string };
      status = reply.status;
    } catch {
      /* the receiver may reset the stream instead */
    }
    expect(status === 'rejected' || status === 'stream-error').toBe(true);
    expect(runner.submitted.length).toBe(before);
    expect(v.receiver.rejected).toBeGreaterThanOrEqual(5);
    // The node is still healthy.
    expect((await sendTask(net.manager.libp2p, v.peerId, good.envelope)).status).toBe('accepted');
  }, 60_000);
});
