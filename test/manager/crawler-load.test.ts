// The crawlers' load CAF steers on in the manager: the sum over the copies of each
// crawler's report the peer table keeps (crawler-load.ts), each report bounded,
// stale or unanswering crawlers left out; first on hand-made peer states, then on a
// loopback network of real libp2p volunteers whose runners report loads the test sets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PeerState } from '../../src/dht/peers.js';
import type { ResultSink, Task, TaskLoad } from '../../src/crawler/task.js';
import type { TaskRunner } from '../../src/node/node.js';
import { TaskManager } from '../../src/crawler/manager.js';
import { LazyRunner } from '../../src/node/lazy-runner.js';
import { aggregateLoad, DEFAULT_CRAWLER_LOAD, DEFAULT_LOAD_STALE_MS, threadsOf } from '../../src/manager/crawler-load.js';
import { waitFor } from '../../testbed/net/harness.js';
import { LoopbackNetwork } from './network-fixture.js';

const peer = (id: string, load: TaskLoad | undefined, loadAt: number, more: Partial<PeerState> = {}): PeerState => ({ id, crawler: true, down: false, seenAt: loadAt, ...(load !== undefined ? { load, loadAt } : {}), ...more });

describe('aggregateLoad', () => {
  it('reads threads from {running, queued, free}: the running ones when tasks also queue, else half the slots (a queue of one task per thread)', () => {
    expect(threadsOf({ running: 5, queued: 3, free: 2 })).toBe(5); // a default crawler (5 threads, queue 5) with 3 queued
    expect(threadsOf({ running: 2, queued: 0, free: 8 })).toBe(5); // the same with 2 running
    expect(threadsOf({ running: 0, queued: 0, free: 10 })).toBe(5);
    expect(threadsOf({ running: 4, queued: 0, free: 0 })).toBe(4); // a paused one reports free 0
    expect(threadsOf({ running: 0, queued: 1, free: 9 })).toBe(5); // still loading its crawler: its first task waits
  });

  it('counts a reported thread count as it is (never below the running tasks), where inference would miscount', () => {
    // 3 threads and a queue of 6 (the demo's volunteers): inferred 4.5, reported 3
    expect(threadsOf({ running: 1, queued: 0, free: 8 })).toBe(4.5);
    expect(threadsOf({ running: 1, queued: 0, free: 8, threads: 3 })).toBe(3);
    // 8 threads and a queue of 2, 2 queued behind 8 running: inferred 8 either way; idle: inferred 5, reported 8
    expect(threadsOf({ running: 0, queued: 0, free: 10, threads: 8 })).toBe(8);
    // draining: it reports only its running ones
    expect(threadsOf({ running: 2, queued: 0, free: 0, threads: 2 })).toBe(2);
    expect(threadsOf({ running: 4, queued: 0, free: 0, threads: 0 })).toBe(4);
    // a bad copy falls back to the inference
    expect(threadsOf({ running: 0, queued: 0, free: 10, threads: Number.NaN })).toBe(5);
  });

  it("the runners' own reports: a TaskManager and the lazy stand-in report their threads, none (beyond the running) while paused", async () => {
    const sink: ResultSink = { upload: async () => {} } as unknown as ResultSink;
    const tm = new TaskManager({ threads: 3, queue: 6, sink });
    expect(tm.load()).toEqual({ running: 0, queued: 0, free: 9, threads: 3 });
    expect(threadsOf(tm.load())).toBe(3);
    await tm.pause();
    expect(tm.load()).toEqual({ running: 0, queued: 0, free: 0, threads: 0 });
    tm.resume();
    expect(tm.load().threads).toBe(3);
    await tm.close();
    const lazy = new LazyRunner({ capacity: 9, threads: 3, create: async () => new TaskManager({ threads: 3, queue: 6, sink }) });
    expect(lazy.load()).toEqual({ running: 0, queued: 0, free: 9, threads: 3 });
    lazy.setCapacity(12, 4);
    expect(lazy.load().threads).toBe(4);
    await lazy.pause();
    expect(lazy.load()).toEqual({ running: 0, queued: 0, free: 0, threads: 0 });
    await lazy.close();
  });

  it('sums the crawlers heard from within the bound; stale, down, never-reported and non-crawler peers are left out', () => {
    const now = 1_000_000;
    const r = aggregateLoad(
      [
        peer('a', { running: 1, queued: 0, free: 9 }, now - 1000),
        peer('b', { running: 3, queued: 2, free: 0 }, now - DEFAULT_LOAD_STALE_MS),
        peer('stale', { running: 0, queued: 0, free: 10 }, now - DEFAULT_LOAD_STALE_MS - 1),
        peer('down', { running: 0, queued: 0, free: 10 }, now, { down: true }),
        peer('silent', undefined, now),
        peer('manager', { running: 0, queued: 0, free: 10 }, now, { crawler: false }),
      ],
      now,
    );
    expect(r).toEqual({ load: { threads: 8, running: 4, queued: 2 }, crawlers: 2, stale: 3, bounded: 0 });
    expect(aggregateLoad([peer('a', { running: 1, queued: 0, free: 9 }, 0)], DEFAULT_LOAD_STALE_MS + 1).load).toBeNull();
  });

  it('bounds each claim: threads at 64 (scaled whole), queued at 2 per thread; a paused crawler counts as no threads', () => {
    const now = 5000;
    const liar = aggregateLoad([peer('x', { running: 0, queued: 0, free: 1_000_000 }, now)], now);
    expect(liar).toEqual({ load: { threads: 64, running: 0, queued: 0 }, crawlers: 1, stale: 0, bounded: 1 });
    const big = aggregateLoad([peer('y', { running: 128, queued: 64, free: 0 }, now)], now); // 128 busy threads, 64 queued
    expect(big.load).toEqual({ threads: 64, running: 64, queued: 32 });
    const queues = aggregateLoad([peer('z', { running: 5, queued: 900_000, free: 0 }, now)], now);
    expect(queues.load).toEqual({ threads: 5, running: 5, queued: 10 });
    expect(aggregateLoad([peer('p', { running: 0, queued: 0, free: 0 }, now)], now).load).toEqual({ threads: 0, running: 0, queued: 0 });
    expect(DEFAULT_CRAWLER_LOAD).toMatchObject({ maxThreads: 64, maxQueuePerThread: 2 });
  });
});

/** A runner whose reported load the test sets (the volunteer node, its wire and the manager are real). */
class ReportingRunner implements TaskRunner {
  constructor(public report: TaskLoad) {}
  submit(_t: Task): 'accepted' | 'full' {
    return 'full';
  }
  load(): TaskLoad {
    return { ...this.report };
  }
  async drain(): Promise<Task[]> {
    return [];
  }
  async close(): Promise<void> {}
}

describe('the manager aggregates the load real volunteers report', () => {
  let net: LoopbackNetwork;
  beforeAll(async () => {
    net = await LoopbackNetwork.start({ dirPrefix: 'volcrawl-load-', sites: [{ name: 'l', pages: 2, fanout: 1, changesPerDay: 1 }], webSeed: 3, warc: false, manager: {}, volunteerSeed: 300, strategy: 'caf' });
  }, 120_000);
  afterAll(async () => {
    await net?.close();
  }, 60_000);

  it('sums what each reports (a liar bounded), follows a new report, drops a crawler that is gone, and goes null when every copy is stale', async () => {
    const node = net.mgr.node;
    const runners = [new ReportingRunner({ running: 1, queued: 0, free: 9 }), new ReportingRunner({ running: 3, queued: 2, free: 0 }), new ReportingRunner({ running: 0, queued: 0, free: 1_000_000 })];
    const vols = [];
    for (let i = 0; i < runners.length; i++) vols.push(await net.addVolunteer(i, (_sink: ResultSink) => runners[i]!));
    await waitFor(() => node.crawlerLoad().crawlers === 3, 30_000, 'the manager to hear the three loads');
    const first = node.crawlerLoad();
    expect(first.load).toEqual({ threads: 5 + 3 + 64, running: 4, queued: 2 });
    expect(first.bounded).toBe(1);
    // what the scheduler's round is fed is this aggregate; the operator API shows it
    expect(net.mgr.manager.tasks.loadSource!()).toEqual(first.load);
    const groups = (await (await fetch(`${net.mgr.api.url}/api/groups`)).json()) as { strategy: string; crawlerLoad: { load: unknown; crawlers: number } };
    expect(groups.strategy).toBe('caf');
    expect(groups.crawlerLoad).toMatchObject({ load: first.load, crawlers: 3 });
    // the survey asks crawlers whose copy is older than its period: a new report is taken up
    runners[0]!.report = { running: 5, queued: 5, free: 0 };
    expect(await node.loadSurvey.pass(performance.now() + 61_000)).toBe(3);
    expect(node.crawlerLoad().load).toEqual({ threads: 5 + 3 + 64, running: 8, queued: 7 });
    // a crawler gone without a word: the next survey's query fails, it is marked down and left out
    await vols[1]!.kill();
    await node.loadSurvey.pass(performance.now() + 61_000);
    const after = node.crawlerLoad();
    expect(after.crawlers).toBe(2);
    expect(after.load).toEqual({ threads: 5 + 64, running: 5, queued: 5 });
    // a volunteer that reports its threads (since session 12) is counted by them across the wire:
    // 3 threads with a queue of 6 would be inferred as 4.5
    runners[0]!.report = { running: 1, queued: 0, free: 8, threads: 3 };
    await node.loadSurvey.pass(performance.now() + 61_000);
    expect(node.crawlerLoad().load).toEqual({ threads: 3 + 64, running: 1, queued: 0 });
    // no copy within the bound: no load, CAF steers on the success rate
    expect(node.crawlerLoad(performance.now() + DEFAULT_LOAD_STALE_MS + 1).load).toBeNull();
  }, 120_000);
});
