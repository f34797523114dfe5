// End to end on loopback: a volunteer holding a task stops gracefully and
// migrates it; the crawler it went to completes it, and the manager's storage
// applies that upload (the signed hand-over proves the new holder) — the task
// ends done, not failed at its deadline. Real libp2p nodes, the manager as
// `dht-manager serve` starts it, the real TaskManager on the new holder against
// the local test web; no timing assertions. Before that, forged hand-over
// claims sent over the wire are refused and change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { TaskManager } from '../../src/crawler/manager.js';
import { waitFor } from '../../testbed/net/harness.js';
import { FakeRunner } from '../../testbed/net/fake-runner.js';
import { signHandover, type Handover } from '../../src/dht/signing.js';
import { uploadResult } from '../../src/dht/upload.js';
import { resultFor } from './helpers.js';
import { LoopbackNetwork } from './network-fixture.js';

let net: LoopbackNetwork;

describe('manager + migrating volunteer', () => {
  beforeAll(async () => {
    net = await LoopbackNetwork.start({
      dirPrefix: 'volcrawl-e2e-mig-',
      sites: [{ name: 'moved', pages: 4, fanout: 3, changesPerDay: 1 }],
      webSeed: 7,
      warc: false,
      manager: { recrawl: { minInterval: 0 }, retryDelayMs: 1000 },
      volunteerSeed: 200,
    });
  }, 120_000);

  afterAll(async () => {
    await net?.close();
  }, 60_000);

  it("a gracefully stopped volunteer's task is completed where it migrated and its upload is applied", async () => {
    const { web, mgr } = net;
    // The first volunteer holds whatever it gets and never finishes it on its own.
    let held: FakeRunner | undefined;
    const a = await net.addVolunteer(0, (sink) => (held = new FakeRunner(sink, { hold: true })));
    const m = mgr.manager;
    const ch = await m.channels.add({ url: web.site('moved').url('/'), depth: 1, delayMs: 0 });
    await waitFor(() => a.heldTasks().length === 1, 90_000, 'the task to reach the first volunteer');
    const id = a.heldTasks()[0]!;
    await waitFor(async () => (await m.tasks.active(id))?.holder === a.peerId, 30_000, 'the manager to record the first holder');

    // A second volunteer with the real crawler joins; the first one leaves politely.
    const keyB = await generateKeyPair('Ed25519');
    const b = await net.addVolunteer(1, (sink) => new TaskManager({ threads: 2, queue: 2, allowPrivate: true, sink }), keyB);

    // Before the hand-over, b merely claims one over the wire: a link that says it
    // comes from a but is signed by b, and a link b signs itself (b never held the
    // task). Both are refused and change nothing.
    const task = held!.running.get(id)!.task;
    const claim = async (handover: Handover[]) =>
      uploadResult(b.libp2p, mgr.node.storageEndpoint(), { orderId: id, host: '127.0.0.1', hostRttMs: null, handover, result: resultFor(task, [{ path: '/', body: 'forged' }]) }, { attempts: 1 });
    const forged = { ...(await signHandover(keyB, b.peerId, id, b.peerId)), from: a.peerId };
    await expect(claim([forged])).rejects.toThrow(/bad hand-over signature/);
    await expect(claim([await signHandover(keyB, b.peerId, id, b.peerId)])).rejects.toThrow(/no hand-over from the holder/);
    expect(m.counters.uploadsRefused).toBe(2);
    const still = (await m.tasks.active(id))!;
    expect(still.holder).toBe(a.peerId);
    expect(still.parts).toBe(0);
    expect(m.counters.uploadsApplied).toBe(0);

    await waitFor(() => a.peers.crawlers().some((p) => p.id === b.peerId), 60_000, 'the first volunteer to know the second');
    const { migrated, lost } = await a.shutdown(20_000);
    expect(lost).toEqual([]);
    expect(migrated).toEqual([id]);

    await waitFor(async () => (await m.repos.tasks.finished(id))?.state === 'done', 90_000, 'the migrated task to be done');
    const rec = (await m.repos.tasks.finished(id))!;
    expect(rec.holder).toBe(b.peerId);
    expect(rec.parts).toBeGreaterThan(0);
    expect(m.counters.uploadsRefused).toBe(2); // only the two claims above
    expect(m.counters.uploadsApplied).toBeGreaterThan(0);
    expect(m.counters.tasksFailed).toBe(0);
    expect(m.counters.tasksSucceeded).toBeGreaterThanOrEqual(1);
    const hist = await m.channels.history(ch.id);
    expect(hist[0]?.crawler).toBe(b.peerId);
    expect((await mgr.manager.pages.latest(ch.id)).length).toBe(4);
  }, 240_000);
});
