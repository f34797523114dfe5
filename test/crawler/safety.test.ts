// The owner's block list: names, domains and address ranges never fetched,
// checked in the connect path after DNS resolution like the private-address
// guard — directly, through a redirect, and on the local test web, where the
// blocked site counts the requests it gets (none).
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Downloader } from '../../src/crawler/downloader.js';
import { DEFAULT_LIMITS } from '../../src/crawler/limits.js';
import { checkLiteralHost, OwnerBlockList, resolveHost, safeLookup } from '../../src/crawler/safety.js';
import { parseTask, type TaskResult } from '../../src/crawler/task.js';
import { runTask } from '../../src/crawler/thread.js';
import { resultSchema } from '../../src/manager/domain/result-schema.js';
import { TestWeb } from '../../testbed/web/testweb.js';
import { CollectSink } from './helpers.js';

const rules = (o: Partial<{ domains: string[]; domainSuffixes: string[]; addressRanges: string[] }>) => ({ domains: [], domainSuffixes: [], addressRanges: [], ...o });

describe('the block list', () => {
  const list = new OwnerBlockList(rules({ domains: ['intranet.example.com'], domainSuffixes: ['bank.example'], addressRanges: ['203.0.113.0/24', '2001:db8:1::/48', '192.0.2.7/32'] }));

  it('blocks exact names, a domain with everything under it, and address ranges', () => {
    expect(list.hostReason('intranet.example.com')).toBe('host intranet.example.com is in never_fetch.domains');
    expect(list.hostReason('INTRANET.example.com.')).not.toBeNull(); // case and the trailing dot do not escape it
    expect(list.hostReason('www.intranet.example.com')).toBeNull(); // an exact name is only that name
    expect(list.hostReason('bank.example')).toBe('host bank.example is under bank.example in never_fetch.domain_suffixes');
    expect(list.hostReason('login.eu.bank.example')).not.toBeNull();
    expect(list.hostReason('notbank.example')).toBeNull();
    expect(list.addressReason('203.0.113.77')).toBe('address 203.0.113.77 is in never_fetch.address_ranges');
    expect(list.addressReason('203.0.114.1')).toBeNull();
    expect(list.addressReason('192.0.2.7')).not.toBeNull();
    expect(list.addressReason('192.0.2.8')).toBeNull();
    expect(list.addressReason('2001:db8:1:ffff::1')).not.toBeNull();
    expect(list.addressReason('2001:db8:2::1')).toBeNull();
    // An IPv4 range also covers the address written inside IPv6 (mapped, NAT64).
    expect(list.addressReason('::ffff:203.0.113.9')).not.toBeNull();
    expect(list.addressReason('64:ff9b::cb00:7109')).not.toBeNull();
  });

  it('update() swaps the rules in place for every holder', () => {
    const l = new OwnerBlockList(rules({ domains: ['a.example'] }));
    expect(l.hostReason('a.example')).not.toBeNull();
    l.update(rules({ domains: ['b.example'] }));
    expect(l.hostReason('a.example')).toBeNull();
    expect(l.hostReason('b.example')).not.toBeNull();
    expect(l.size).toBe(1);
  });

  it('the lookup refuses a blocked name without resolving it, and a name with any blocked address', async () => {
    let resolved = 0;
    const answers: Record<string, LookupAddress[]> = {
      'shop.example': [{ address: '198.51.100.1', family: 4 }],
      'mixed.example': [
        { address: '198.51.100.1', family: 4 },
        { address: '203.0.113.5', family: 4 },
      ],
    };
    const resolve = (h: string, _o: unknown, cb: (e: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => {
      resolved++;
      cb(null, answers[h] ?? []);
    };
    const look = (h: string) =>
      new Promise<{ err: (Error & { code?: string }) | null; addrs: LookupAddress[] }>((done) =>
        safeLookup(true, list, resolve)(h, { all: true }, ((err: Error | null, addrs: LookupAddress[]) => done({ err, addrs })) as never),
      );
    const byName = await look('www.bank.example');
    expect(byName.err?.code).toBe('EBLOCKED');
    expect(resolved).toBe(0);
    expect((await look('mixed.example')).err?.message).toMatch(/^blocked by this computer's owner: address 203\.0\.113\.5 is in never_fetch\.address_ranges/);
    expect((await look('shop.example')).addrs).toEqual(answers['shop.example']);
  });

  it('IP literals are checked before connecting, even where private addresses are allowed', async () => {
    expect(() => checkLiteralHost('[2001:db8:1::5]', true, list)).toThrow(expect.objectContaining({ code: 'EBLOCKED' }));
    expect(() => checkLiteralHost('203.0.113.1', true, list)).toThrow(/never_fetch\.address_ranges/);
    expect(() => checkLiteralHost('198.51.100.1', true, list)).not.toThrow();
    const r = await resolveHost('127.0.0.1', true, new OwnerBlockList(rules({ addressRanges: ['127.0.0.0/8'] })));
    expect(r.ok).toBe(false);
  });
});

describe('on the local test web', () => {
  let web: TestWeb;
  beforeAll(async () => {
    web = await TestWeb.start([
      // Reached by name through DNS: localhost → 127.0.0.1.
      { name: 'blocked', pages: 6, host: 'localhost' },
      // On a second loopback address, so a range can block one and not the other; redirects to 'blocked'.
      { name: 'entry', pages: 3, bindHost: '127.0.0.2', bad: true, linksTo: ['blocked'] },
    ]);
  });
  afterAll(async () => {
    await web.close();
  });

  const task = (origin: string, seed: string, id: string) => parseTask({ id, scope: { origin }, seeds: [seed], maxDepth: 1, deadline: Date.now() + 60_000, delayMs: 0 });
  const byRange = () => new OwnerBlockList(rules({ addressRanges: ['127.0.0.1/32'] }));
  const byName = () => new OwnerBlockList(rules({ domainSuffixes: ['localhost'] }));

  it('the blocked site is reachable without the list (the control)', async () => {
    const site = web.site('blocked');
    const before = site.stats.requests;
    const out = await runTask(task(site.origin, site.url('/'), 'control'), new CollectSink(), { allowPrivate: true });
    expect(out.status).toBe('completed');
    expect(site.stats.requests - before).toBeGreaterThan(1);
  });

  for (const [how, tag, list] of [
    ['by its address after DNS resolution', 'range', byRange],
    ['by its domain', 'name', byName],
  ] as const) {
    it(`a blocked host is never fetched, directly or through a redirect (${how})`, async () => {
      const blocked = web.site('blocked');
      const entry = web.site('entry');
      const before = blocked.stats.requests;
      const blockList = list();

      // Directly: the task ends 'refused' with a reason the manager can read, and the upload is valid.
      const sink = new CollectSink();
      const out = await runTask(task(blocked.origin, blocked.url('/'), `direct-${tag}`), sink, { allowPrivate: true, blockList });
      expect(out.status).toBe('refused');
      expect(out.outcomes['owner-blocked']).toBe(1);
      const final: TaskResult = sink.final();
      expect(final.reason).toMatch(/^blocked by this computer's owner: (address 127\.0\.0\.1 is in never_fetch\.address_ranges|host localhost is under localhost)/);
      expect(final.errors[0]).toMatchObject({ outcome: 'owner-blocked' });
      expect(resultSchema.safeParse(final).success).toBe(true);

      // Through a redirect from an allowed site: the redirect is reported, not followed...
      const sink2 = new CollectSink();
      const via = await runTask(task(entry.origin, entry.url('/bad/redirect/offsite'), `redirect-${tag}`), sink2, { allowPrivate: true, blockList });
      expect(via.status).toBe('completed');
      expect(via.outcomes['redirect-offsite']).toBe(1);
      const target = sink2.final().interSiteUrls.find((u) => u.startsWith(blocked.origin));
      expect(target).toBe(blocked.url('/from-redirect'));
      // ...and the task the manager makes of it is refused like any other.
      const next = await runTask(task(blocked.origin, target as string, `redirect-next-${tag}`), new CollectSink(), { allowPrivate: true, blockList });
      expect(next.status).toBe('refused');

      // The connect path itself refuses, not only the early check: a downloader aimed straight at the host.
      const dl = new Downloader(blocked.origin, { allowPrivate: true, blockList, userAgent: 'test', limits: DEFAULT_LIMITS });
      const r = await dl.get(new URL(blocked.url('/p/1.html')));
      await dl.close();
      expect(r).toMatchObject({ ok: false, outcome: 'owner-blocked' });

      expect(blocked.stats.requests).toBe(before);
      expect(entry.stats.requests).toBeGreaterThan(0);
    });
  }
});
