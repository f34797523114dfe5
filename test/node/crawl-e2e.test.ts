// End to end with the real crawler: four volunteers running src/crawler's
// TaskManager against the local test web (allowPrivate). A task is sent to one
// volunteer, which is stopped gracefully mid-crawl; the task must be migrated
// and crawled to completion by another volunteer, whose result reaches the
// storage node.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskManager } from '../../src/crawler/index.js';
import { sendTask } from '../../src/dht/task-protocol.js';
import { TestWeb } from '../../testbed/web/testweb.js';
import { TestNet, waitFor } from '../../testbed/net/harness.js';

let web: TestWeb;
const net = new TestNet({
  nodes: 4,
  seed: 5,
  createRunner: (_i, sink) => new TaskManager({ threads: 2, queue: 2, allowPrivate: true, sink, lowPriority: false }),
});

describe('real crawler on the test web', () => {
  beforeAll(async () => {
    web = await TestWeb.start([{ name: 'site', pages: 30, fanout: 5, robots: 'none' }]);
    await net.start();
  }, 300_000);
  afterAll(async () => {
    await net.stop();
    await web.close();
  }, 60_000);

  it("a gracefully stopped node's running crawl is migrated and completed elsewhere", async () => {
    await waitFor(() => net.nodes.every((n) => n.peers.crawlers().length >= 3), 180_000, 'crawlers to know each other');
    const site = web.site('site');
    const origin = site.origin;
    const task = { id: 'crawl-1', scope: { origin, pathPrefixes: ['/'] }, seeds: [`${origin}/`], maxDepth: 4, delayMs: 250, deadline: Date.now() + 600_000 };
    const { order, envelope } = await net.order(net.hosts[0]!, { task, coord: false });
    const first = net.nodes[0]!;
    expect((await sendTask(net.manager.libp2p, first.peerId, envelope)).status).toBe('accepted');
    await waitFor(() => site.stats.requests >= 3, 60_000, 'the crawl to start');
    const { migrated, lost } = await first.shutdown(30_000);
    expect(lost).toEqual([]);
    expect(migrated).toEqual([order.id]);
    await waitFor(() => net.uploads.some((u) => u.result.taskId === order.id && u.result.final), 240_000, 'the migrated crawl to finish');
    const fin = net.uploads.find((u) => u.result.taskId === order.id && u.result.final)!;
    expect(fin.crawler).not.toBe(first.peerId);
    expect(fin.result.status).toBe('completed');
    const pages = net.uploads.filter((u) => u.result.taskId === order.id).reduce((a, u) => a + ((u.result as { pages?: unknown[] }).pages?.length ?? 0), 0);
    expect(pages).toBeGreaterThan(10);
    // Nothing from the stopped node was uploaded for this task.
    expect(net.uploads.some((u) => u.result.taskId === order.id && u.crawler === first.peerId)).toBe(false);
  }, 400_000);

  it("an owner's pause hands the running crawl on and forwards new orders, without leaving; resume takes tasks again", async () => {
    const site = web.site('site');
    const origin = site.origin;
    const node = net.nodes[1]!;
    const mk = (id: string) => ({ id, scope: { origin, pathPrefixes: ['/'] }, seeds: [`${origin}/`], maxDepth: 4, delayMs: 250, deadline: Date.now() + 600_000 });
    const running = await net.order(net.hosts[0]!, { task: mk('pause-1'), coord: false });
    expect((await sendTask(net.manager.libp2p, node.peerId, running.envelope)).status).toBe('accepted');
    const before = site.stats.requests;
    await waitFor(() => site.stats.requests >= before + 3, 60_000, 'the crawl to start');
    const { migrated, lost } = await node.takeTasks(false);
    expect(lost).toEqual([]);
    expect(migrated).toEqual([running.order.id]);
    expect(node.paused).toBe(true);
    expect(node.runner.load().free).toBe(0);
    // A new order sent to the paused node is taken by another crawler.
    const next = await net.order(net.hosts[0]!, { task: { ...mk('pause-2'), delayMs: 0 }, coord: false });
    const reply = await sendTask(net.manager.libp2p, node.peerId, next.envelope);
    expect(reply.status).toBe('accepted');
    expect(reply.by).not.toBe(node.peerId);
    await waitFor(() => [running, next].every((o) => net.uploads.some((u) => u.result.taskId === o.order.id && u.result.final)), 240_000, 'both crawls to finish elsewhere');
    expect(net.uploads.some((u) => u.crawler === node.peerId && ['pause-1', 'pause-2'].includes(u.result.taskId))).toBe(false);
    // Still in the overlay, and taking tasks again once resumed.
    expect(node.libp2p.status).toBe('started');
    await node.takeTasks(true);
    const third = await net.order(net.hosts[0]!, { task: { ...mk('pause-3'), delayMs: 0 }, coord: false });
    const r3 = await sendTask(net.manager.libp2p, node.peerId, third.envelope);
    expect(r3).toMatchObject({ status: 'accepted', by: node.peerId });
    // Let it finish here: still running when the next test pauses this node, it
    // would be handed to that test's node and counted among its lost tasks
    // (seen once in a clean-clone CI under load 30).
    await waitFor(() => net.uploads.some((u) => u.result.taskId === third.order.id && u.result.final), 240_000, 'the third crawl to finish');
  }, 400_000);

  it('a task no crawler has room for on pause goes back to its storage node at once, ended cancelled with the reason', async () => {
    const site = web.site('site');
    const origin = site.origin;
    const node = net.nodes[2]!;
    const others = [net.nodes[1]!, net.nodes[3]!];
    await Promise.all(others.map((n) => n.takeTasks(false))); // nobody else has room
    try {
      const o = await net.order(net.hosts[0]!, { task: { id: 'back-1', scope: { origin, pathPrefixes: ['/'] }, seeds: [`${origin}/`], maxDepth: 4, delayMs: 250, deadline: Date.now() + 600_000 }, coord: false });
      expect((await sendTask(net.manager.libp2p, node.peerId, o.envelope)).status).toBe('accepted');
      const before = site.stats.requests;
      await waitFor(() => site.stats.requests >= before + 2, 60_000, 'the crawl to start');
      const { migrated, lost } = await node.takeTasks(false);
      expect(migrated).toEqual([]);
      expect(lost).toEqual([o.order.id]);
      // Not left to the deadline: one final result, from the holder, saying why.
      const finals = net.uploads.filter((u) => u.result.taskId === o.order.id && u.result.final);
      expect(finals).toHaveLength(1);
      expect(finals[0]!.crawler).toBe(node.peerId);
      expect(finals[0]!.result).toMatchObject({ status: 'cancelled', reason: expect.stringMatching(/no crawler nearby took the task/) });
    } finally {
      await Promise.all([node, ...others].map((n) => n.takeTasks(true)));
    }
  }, 400_000);
});
