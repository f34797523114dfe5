// End to end on loopback: the manager (as `dht-manager serve` starts it) is the
// bootstrap peer of two real VolunteerNodes running src/crawler's TaskManager
// against the local test web. A channel is crawled, its pages change, and the
// changed page shows up as a new stored version after the recrawl. No timing
// assertions: every wait is on a condition with a generous bound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TaskManager } from '../../src/crawler/manager.js';
import { waitFor } from '../../testbed/net/harness.js';
import { LoopbackNetwork } from './network-fixture.js';

const DAY = 86_400_000;
let net: LoopbackNetwork;

describe('manager + 2 volunteers + test web', () => {
  beforeAll(async () => {
    net = await LoopbackNetwork.start({
      dirPrefix: 'volcrawl-e2e-',
      sites: [{ name: 'news', pages: 6, fanout: 5, changesPerDay: 24 }],
      webSeed: 5,
      warc: true,
      // seconds-long intervals so the test sees several recrawls
      manager: { groupIntervals: [0.05, 0.1, 0.2, 0.4, 0.8], recrawl: { minInterval: 0 }, retryDelayMs: 1000 },
      volunteerSeed: 100,
    });
    for (let i = 0; i < 2; i++) {
      await net.addVolunteer(i, (sink) => new TaskManager({ threads: 2, queue: 2, allowPrivate: true, sink }));
    }
  }, 120_000);

  afterAll(async () => {
    await net?.close();
  }, 60_000);

  it('a changed page shows up in storage after its recrawl', async () => {
    const { dir, web, mgr, volunteers: nodes } = net;
    const site = web.site('news');
    const ch = await net.addChannel({ url: site.url('/'), depth: 2, delayMs: 0, group: 0 });
    const m = mgr.manager;
    await waitFor(async () => (await m.channels.history(ch.id)).length >= 1, 90_000, 'the first crawl to be stored');
    const first = await mgr.manager.pages.latest(ch.id);
    expect(first.length).toBe(6);
    expect(first.every((p) => p.version === 1)).toBe(true);
    const holders = (await m.channels.history(ch.id)).map((h) => h.crawler);
    expect(nodes.map((n) => n.peerId)).toContain(holders[0]);

    // Time passes on the test web: pages change.
    web.clock.advance(DAY);
    const changed = [0, 1, 2, 3, 4, 5].filter((i) => site.versionAt(i) > site.versionAt(i, web.clock.now() - DAY));
    expect(changed.length).toBeGreaterThan(0);
    const url = site.pageUrl(changed[0]!);
    await waitFor(async () => (await mgr.manager.pages.versions(ch.id, url)).length >= 2, 90_000, `a second version of ${url}`);
    const versions = await mgr.manager.pages.versions(ch.id, url);
    expect(versions[1]!.text).not.toBe(versions[0]!.text);
    expect(versions[1]!.digest).not.toBe(versions[0]!.digest);
    const h = await m.channels.history(ch.id);
    const withObs = h.find((x) => x.observation !== null)!;
    expect(withObs.observation!.revisited).toBeGreaterThan(0);
    expect(withObs.observation!.changed).toBeGreaterThan(0);
    const groups = (await (await fetch(`${mgr.api.url}/api/groups`)).json()) as { groups: { channels: number }[] };
    expect(groups.groups.reduce((s, g) => s + g.channels, 0)).toBe(1);
    const crawlers = (await (await fetch(`${mgr.api.url}/api/crawlers`)).json()) as { online: number };
    expect(crawlers.online).toBeGreaterThan(0);
    expect(readdirSync(join(dir, 'warc')).some((f) => f.endsWith('.warc.gz'))).toBe(true);
  }, 200_000);
});
