import { afterEach, describe, expect, it } from 'vitest';
import type { Manager } from '../../src/manager/manager.js';
import { ConflictError, UploadRefused, ValidationError } from '../../src/manager/errors.js';
import { MINUTE } from '../../src/manager/domain/scheduler.js';
import { Clock, openManager, resultFor, tempDir, upload } from './helpers.js';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import type { PrivateKey } from '@libp2p/interface';
import { signHandover } from '../../src/dht/signing.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(extra = {}) {
  const t = tempDir();
  const clock = new Clock();
  let m: Manager = await openManager(t.dir, clock, extra);
  const holder = { m };
  cleanups.push(async () => {
    await holder.m.close().catch(() => undefined);
    t.cleanup();
  });
  return {
    dir: t.dir,
    clock,
    holder,
    get m() {
      return holder.m;
    },
    async restart() {
      await holder.m.close();
      m = await openManager(t.dir, clock, extra);
      holder.m = m;
      return m;
    },
  };
}

describe('channel database', () => {
  it('runs CAF; a database stored under another strategy switches to the one given at open, keeping its group intervals and window', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const clock = new Clock();
    let m = await openManager(t.dir, clock, { strategy: 'iir' });
    await m.channels.add({ url: 'http://a.test/' });
    m.sched.state.groups[0]!.interval = 42; // as an IIR round would leave it
    await m.repos.commit([m.repos.meta.recrawlOp(m.sched.meta())]);
    await m.close();
    m = await openManager(t.dir, clock, { strategy: 'caf' });
    expect(m.sched.state.options.strategy).toBe('caf');
    expect(m.sched.needsScan).toBe(true);
    expect(m.sched.state.groups[0]!.interval).toBe(42);
    expect(m.sched.size).toBe(1);
    await m.close();
    // without a strategy given, the stored one stays
    m = await openManager(t.dir, clock);
    expect(m.sched.state.options.strategy).toBe('caf');
    await m.close();
  });

  it('adds, lists, updates and deletes channels; validates every field', async () => {
    const s = await setup();
    const a = await s.m.channels.add({ url: 'https://news.example.com/' });
    expect(a.kind).toBe('host');
    expect(a.pathPrefixes).toEqual(['/']);
    expect(a.seeds).toEqual(['https://news.example.com/']);
    const b = await s.m.channels.add({ url: 'http://example.org/w/index.html', filters: ['^https?://example\\.org/w/[a-z]+$'], depth: 2 });
    expect(b.kind).toBe('directory');
    expect(b.pathPrefixes).toEqual(['/w/']);
    const c = await s.m.channels.add({ origin: 'http://example.net', pathPrefixes: ['/a/', '/b/'] });
    expect(c.kind).toBe('directories');
    expect((await s.m.channels.list()).map((x) => x.id)).toEqual([a.id, b.id, c.id]);

    await expect(s.m.channels.add({ url: 'ftp://example.com/' })).rejects.toThrow(ValidationError);
    await expect(s.m.channels.add({ url: 'javascript:alert(1)' })).rejects.toThrow(/scheme/);
    await expect(s.m.channels.add({ url: 'http://x.test/', filters: ['(a+)+$'] })).rejects.toThrow(/catastrophic backtracking/);
    await expect(s.m.channels.add({ url: 'http://x.test/', filters: ['(['] })).rejects.toThrow(/does not compile/);
    await expect(s.m.channels.add({ url: 'http://x.test/', depth: -1 })).rejects.toThrow(ValidationError);
    await expect(s.m.channels.add({ url: 'http://x.test/', bogus: 1 })).rejects.toThrow(ValidationError);
    await expect(s.m.channels.add({ origin: 'http://x.test', pathPrefixes: ['/a/'], seeds: ['http://x.test/b/'] })).rejects.toThrow(/outside the channel/);
    await expect(s.m.channels.add({ url: 'https://news.example.com/' })).rejects.toThrow(ConflictError);
    expect(s.m.sched.size).toBe(3);

    const b2 = await s.m.channels.update(b.id, { depth: 5, group: 0 });
    expect(b2.depth).toBe(5);
    expect((await s.m.channels.recrawlState(b.id)).group).toBe(0);
    await expect(s.m.channels.update(b.id, { filters: ['(x*)*y'] })).rejects.toThrow(ValidationError);
    expect((await s.m.channels.get(b.id)).filters).toEqual(['^https?://example\\.org/w/[a-z]+$']);
    await s.m.channels.delete(a.id);
    await expect(s.m.channels.recrawlState(a.id)).rejects.toThrow(/no channel/);
    await expect(s.m.channels.get(a.id)).rejects.toThrow(/no channel/);
    // the key is free again
    await s.m.channels.add({ url: 'https://news.example.com/' });
  });

  it('imports a seed list with comments and reports bad lines', async () => {
    const s = await setup();
    const r = await s.m.channels.importSeedList('# seeds\nhttp://a.test/\n\nhttp://b.test/docs/x.html  # a directory\nmailto:x@y\nhttp://a.test/\n');
    expect(r.added.map((c) => c.origin)).toEqual(['http://a.test', 'http://b.test']);
    expect(r.added[1]!.pathPrefixes).toEqual(['/docs/']);
    expect(r.skipped.map((x) => x.line ?? x.url)).toEqual([5, 'http://a.test/']);
  });

  it('a restart keeps channels, scheduler state, tasks, pages and history', async () => {
    const s = await setup();
    const ch = await s.m.channels.add({ url: 'http://site.test/', group: 1 });
    const [it1] = await s.m.tasks.issueDue();
    expect(it1!.task.seeds).toEqual(['http://site.test/']);
    s.clock.advance(1000);
    await s.m.ingest.ingest(upload(it1!.task, resultFor(it1!.task, [{ path: '/', body: 'v1' }, { path: '/a', body: 'a1' }])), 'peerA');
    const [it2] = await (async () => {
      s.clock.advance(200 * MINUTE);
      return s.m.tasks.issueDue();
    })();
    expect(it2!.task.pageDigests.length).toBe(2);
    const m2 = await s.restart();
    expect((await m2.channels.get(ch.id)).origin).toBe('http://site.test');
    expect(m2.sched.size).toBe(1);
    expect(m2.tasks.isActive(it2!.task.id)).toBe(true);
    const st2 = await m2.channels.recrawlState(ch.id);
    expect(st2.inFlight).toBe(it2!.task.id);
    expect(st2.updateTimes.length).toBe(1);
    expect(st2.subCount).toBe(2);
    expect((await m2.channels.history(ch.id)).length).toBe(1);
    const latest = await m2.pages.latest(ch.id);
    expect(latest.map((p) => [p.url, p.text])).toEqual([
      ['http://site.test/', 'v1'],
      ['http://site.test/a', 'a1'],
    ]);
    // after another restart the next task still carries the known digests and validators
    s.clock.advance(3 * 60 * MINUTE); // past the task's deadline (its 120 min interval) and the grace
    expect(await m2.tasks.failOverdue()).toBe(1);
    const m3 = await s.restart();
    s.clock.advance(10 * MINUTE);
    const [it3] = await m3.tasks.issueDue();
    expect(it3!.task.pageDigests.length).toBe(2);
    expect(it3!.task.known.map((k) => k.url).sort()).toEqual(['http://site.test/', 'http://site.test/a']);
  });

  it('a repeated upload of the same task part is applied once', async () => {
    const s = await setup();
    const ch = await s.m.channels.add({ url: 'http://rep.test/' });
    const [it1] = await s.m.tasks.issueDue();
    const part0 = resultFor(it1!.task, [{ path: '/', body: 'hello' }], { part: 0, final: false });
    const fin = resultFor(it1!.task, [{ path: '/b', body: 'bee' }], { part: 1, final: true });
    expect(await s.m.ingest.ingest(upload(it1!.task, part0), 'p1')).toBe('applied');
    expect(await s.m.ingest.ingest(upload(it1!.task, part0), 'p1')).toBe('duplicate');
    expect(await s.m.ingest.ingest(upload(it1!.task, fin), 'p1')).toBe('applied');
    expect(await s.m.ingest.ingest(upload(it1!.task, fin), 'p1')).toBe('duplicate');
    expect(s.m.counters.pagesStored).toBe(2);
    expect(s.m.counters.tasksSucceeded).toBe(1);
    expect((await s.m.pages.versions(ch.id, 'http://rep.test/')).length).toBe(1);
    expect((await s.m.channels.history(ch.id)).length).toBe(1);
    expect((await s.m.channels.recrawlState(ch.id)).updateTimes.length).toBe(1);
  });

  it('refuses uploads from another peer, for unknown tasks, out of scope, or malformed', async () => {
    const s = await setup();
    await s.m.channels.add({ url: 'http://own.test/' });
    const [it1] = await s.m.tasks.issueDue();
    await s.m.tasks.onDispatched(it1!.task.id, { status: 'accepted', by: 'holderPeer' });
    const good = resultFor(it1!.task, [{ path: '/', body: 'x' }]);
    await expect(s.m.ingest.ingest(upload(it1!.task, good), 'intruder')).rejects.toThrow(/does not hold/);
    const other = { ...good, taskId: 'nope' };
    await expect(s.m.ingest.ingest({ ...upload(it1!.task, other), orderId: 'nope' }, 'holderPeer')).rejects.toThrow(/unknown task/);
    const out = resultFor(it1!.task, [{ path: '/', body: 'x' }]);
    out.validators[0]!.url = 'http://evil.test/';
    await expect(s.m.ingest.ingest(upload(it1!.task, out), 'holderPeer')).rejects.toThrow(/outside the channel/);
    await expect(s.m.ingest.ingest(upload(it1!.task, { ...good, pages: 'x' } as never), 'holderPeer')).rejects.toThrow(UploadRefused);
    expect(await s.m.ingest.ingest(upload(it1!.task, good), 'holderPeer')).toBe('applied');
  });

  it('accepts an upload from the crawler a task was handed over to, and refuses claimed hand-overs', async () => {
    const s = await setup();
    await s.m.channels.add({ url: 'http://moved.test/' });
    const [it1] = await s.m.tasks.issueDue();
    const id = it1!.task.id;
    const keys = await Promise.all([0, 1, 2].map(() => generateKeyPair('Ed25519')));
    const [a, b, x] = keys.map((k) => peerIdFromPrivateKey(k).toString()) as [string, string, string];
    const [ka, kb, kx] = keys as [PrivateKey, PrivateKey, PrivateKey];
    await s.m.tasks.onDispatched(id, { status: 'accepted', by: a });
    const good = resultFor(it1!.task, [{ path: '/', body: 'moved' }]);
    const handed = await signHandover(ka, a, id, b);
    const refusedBefore = s.m.counters.uploadsRefused;

    // No hand-over, a tampered signature, a link signed by a peer that is not the
    // holder, a hand-over to somebody else, one for another task.
    await expect(s.m.ingest.ingest(upload(it1!.task, good), b)).rejects.toThrow(/does not hold/);
    const flipped = Buffer.from(handed.sig, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    await expect(s.m.ingest.ingest({ ...upload(it1!.task, good), handover: [{ ...handed, sig: flipped.toString('base64') }] }, b)).rejects.toThrow(/bad hand-over signature/);
    await expect(s.m.ingest.ingest({ ...upload(it1!.task, good), handover: [{ ...handed, at: handed.at + 1 }] }, b)).rejects.toThrow(/bad hand-over signature/);
    await expect(s.m.ingest.ingest({ ...upload(it1!.task, good), handover: [await signHandover(kx, x, id, b)] }, b)).rejects.toThrow(/no hand-over from the holder/);
    await expect(s.m.ingest.ingest({ ...upload(it1!.task, good), handover: [{ ...(await signHandover(kx, x, id, b)), from: a }] }, b)).rejects.toThrow(/bad hand-over signature/);
    await expect(s.m.ingest.ingest({ ...upload(it1!.task, good), handover: [handed] }, x)).rejects.toThrow(/to another peer/);
    await expect(s.m.ingest.ingest({ ...upload(it1!.task, good), handover: [await signHandover(ka, a, 'other-task', b)] }, b)).rejects.toThrow(/another task/);
    expect(s.m.counters.uploadsRefused).toBe(refusedBefore + 7);
    const rec = await s.m.tasks.active(id);
    expect(rec?.holder).toBe(a);
    expect(rec?.parts).toBe(0);
    expect(s.m.counters.uploadsApplied).toBe(0);

    // A real hand-over chain a -> b -> ... is accepted; b then holds the task.
    const chain = [handed, await signHandover(kb, b, id, x)];
    expect(await s.m.ingest.ingest({ ...upload(it1!.task, { ...good, final: false }), handover: [handed] }, b)).toBe('applied');
    expect((await s.m.tasks.active(id))?.holder).toBe(b);
    // The old holder may no longer upload; b's own hand-over to x is accepted.
    await expect(s.m.ingest.ingest(upload(it1!.task, { ...good, part: 1 }), a)).rejects.toThrow(/does not hold/);
    expect(await s.m.ingest.ingest({ ...upload(it1!.task, { ...good, part: 1 }), handover: chain }, x)).toBe('applied');
    const done = (await s.m.repos.tasks.finished(id))!;
    expect(done.state).toBe('done');
    expect(done.holder).toBe(x);
    expect(s.m.counters.tasksSucceeded).toBe(1);
  });

  it('a task not completed by its deadline fails and the channel is issued again', async () => {
    const s = await setup({ retryDelayMs: 60_000, taskTimeoutMinMs: 10 * MINUTE, taskTimeoutMaxMs: 10 * MINUTE, graceMs: MINUTE });
    const ch = await s.m.channels.add({ url: 'http://late.test/' });
    const [t1] = await s.m.tasks.issueDue();
    expect(t1!.task.deadline).toBe(s.clock.t + 10 * MINUTE);
    expect(await s.m.tasks.issueDue()).toEqual([]);
    s.clock.advance(10 * MINUTE + 30_000);
    expect(await s.m.tasks.failOverdue()).toBe(0); // within the grace period
    s.clock.advance(31_000);
    // restart while overdue: the in-flight task is restored, then failed
    const m2 = await s.restart();
    expect(m2.tasks.isActive(t1!.task.id)).toBe(true);
    expect(await m2.tasks.failOverdue()).toBe(1);
    expect((await m2.channels.recrawlState(ch.id)).failCount).toBe(1);
    expect(await m2.tasks.issueDue()).toEqual([]); // retry delay
    s.clock.advance(60_000);
    const [t2] = await m2.tasks.issueDue();
    expect(t2!.channel.id).toBe(ch.id);
    expect(t2!.task.id).not.toBe(t1!.task.id);
    // a late upload of the failed task stores its pages but does not count as the update
    expect(await m2.ingest.ingest(upload(t1!.task, resultFor(t1!.task, [{ path: '/', body: 'late' }])), 'p')).toBe('applied');
    expect((await m2.channels.recrawlState(ch.id)).inFlight).toBe(t2!.task.id);
    expect(m2.counters.tasksSucceeded).toBe(0);
  });

  it('never has two tasks in flight on one host, also across a restart', async () => {
    const s = await setup();
    const a = await s.m.channels.add({ url: 'http://big.test/a/', kind: 'directory' });
    const b = await s.m.channels.add({ url: 'http://big.test/b/', kind: 'directory' });
    const other = await s.m.channels.add({ url: 'http://other.test/' });
    const first = await s.m.tasks.issueDue();
    expect(first.map((t) => t.channel.host).sort()).toEqual(['big.test', 'other.test']);
    const big = first.find((t) => t.channel.host === 'big.test')!;
    const waiting = big.channel.id === a.id ? b : a;
    expect((await s.m.channels.recrawlState(waiting.id)).dueAt).toBeLessThanOrEqual(s.clock.t); // due, held back
    expect(await s.m.tasks.issueDue()).toEqual([]);
    const m2 = await s.restart();
    expect(await m2.tasks.issueDue()).toEqual([]);
    const final = resultFor(big.task, [{ path: big.channel.id === a.id ? '/a/' : '/b/', body: 'x' }]);
    expect(await m2.ingest.ingest(upload(big.task, final), 'p')).toBe('applied');
    const next = await m2.tasks.issueDue();
    expect(next.map((t) => t.channel.id)).toEqual([waiting.id]);
    expect(m2.tasks.isActive(first.find((t) => t.channel.id === other.id)!.task.id)).toBe(true);
  });

  it('recrawls feed the estimator and move a fast-changing channel up a group', async () => {
    const s = await setup({ recrawl: { minInterval: 0 } });
    const ch = await s.m.channels.add({ url: 'http://fast.test/', group: 3 });
    for (let v = 0; v < 6; v++) {
      const [it] = await s.m.tasks.issueDue();
      expect(it?.channel.id).toBe(ch.id);
      s.clock.advance(MINUTE);
      // every page changes between every visit
      await s.m.ingest.ingest(upload(it!.task, resultFor(it!.task, [1, 2, 3, 4].map((i) => ({ path: `/${i}`, body: `v${v} p${i}` })))), 'p');
      s.clock.advance((await s.m.channels.recrawlState(ch.id)).intervalMs);
    }
    const after = await s.m.channels.get(ch.id);
    expect(after.changeRate).not.toBeNull();
    expect(after.group).toBeLessThan(3);
    const h = await s.m.channels.history(ch.id);
    expect(h[1]!.observation).toMatchObject({ revisited: 4, changed: 4 });
  });

  it('inter-site URLs become seeds of known channels or candidates', async () => {
    const s = await setup();
    const a = await s.m.channels.add({ url: 'http://a.test/' });
    const b = await s.m.channels.add({ origin: 'http://b.test', pathPrefixes: ['/docs/'] });
    const issued = await s.m.tasks.issueDue();
    const ta = issued.find((x) => x.channel.id === a.id)!;
    await s.m.ingest.ingest(upload(ta.task, resultFor(ta.task, [{ path: '/', body: 'x' }], { interSite: ['http://b.test/docs/p1', 'http://b.test/other', 'https://c.test/z'] })), 'p');
    const cands = await s.m.candidates.list();
    expect(cands.map((c) => c.origin).sort()).toEqual(['http://b.test', 'https://c.test']);
    const tb = issued.find((x) => x.channel.id === b.id)!;
    await s.m.ingest.ingest(upload(tb.task, resultFor(tb.task, [])), 'p');
    s.clock.advance(24 * 60 * MINUTE);
    const next = await s.m.tasks.issueDue();
    expect(next.find((x) => x.channel.id === b.id)!.task.seeds).toContain('http://b.test/docs/p1');
    expect(next.find((x) => x.channel.id === a.id)!.task.interSiteDigests.length).toBe(3);
    const acc = await s.m.candidates.accept('https://c.test');
    expect(acc.seeds).toContain('https://c.test/z');
    expect((await s.m.candidates.reject('http://b.test')).status).toBe('rejected');
  });

  it('places a host once three crawlers reported RTTs', async () => {
    const s = await setup({ recrawl: { minInterval: 0 } });
    await s.m.channels.add({ url: 'http://placed.test/' });
    const coords = [[0, 0], [100, 0], [0, 100]];
    for (let i = 0; i < 3; i++) {
      const [it] = await s.m.tasks.issueDue();
      expect(it!.hostCoord).toBeUndefined();
      await s.m.ingest.ingest(upload(it!.task, resultFor(it!.task, [{ path: '/', body: 'x' }]), { hostRttMs: 50 + i, coord: coords[i]! }), `crawler${i}`);
      s.clock.advance((await s.m.channels.recrawlState(it!.channel.id)).intervalMs + 1);
    }
    const [it] = await s.m.tasks.issueDue();
    expect(it!.hostCoord?.vec.length).toBe(2);
  });
});

describe('page versions', () => {
  it("versions() of a URL leaves out the versions of URLs that continue it with '!'", async () => {
    const s = await setup({ recrawl: { minInterval: 0 } });
    const ch = await s.m.channels.add({ url: 'http://bang.test/' });
    const [it] = await s.m.tasks.issueDue();
    await s.m.ingest.ingest(upload(it!.task, resultFor(it!.task, [{ path: '/a', body: 'a' }, { path: '/a!b', body: 'ab' }, { path: '/a!00000001', body: 'a1' }])), 'p');
    expect((await s.m.pages.versions(ch.id, 'http://bang.test/a')).map((v) => [v.url, v.text])).toEqual([['http://bang.test/a', 'a']]);
    expect((await s.m.pages.versions(ch.id, 'http://bang.test/a!b')).map((v) => v.text)).toEqual(['ab']);
  });
});
