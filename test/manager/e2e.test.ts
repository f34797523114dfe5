// End to end on loopback: the manager (as `dht-manager serve` starts it) is the
// bootstrap peer of two real VolunteerNodes running src/crawler's TaskManager
// against the local test web. A channel is crawled, its pages change, and the
// changed page shows up as a new stored version after the recrawl. No timing
// assertions: every wait is on a condition with a generous bound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { TaskManager } from '../../src/crawler/manager.js';
import { VolunteerNode } from '../../src/node/node.js';
import { startManager, type RunningManager } from '../../src/manager/serve.js';
import { TestWeb } from '../web/testweb.js';
import { waitFor } from '../net/harness.js';

const DAY = 86_400_000;
let dir: string;
let web: TestWeb;
let mgr: RunningManager;
const nodes: VolunteerNode[] = [];

describe('manager + 2 volunteers + test web', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'volcrawl-e2e-'));
    web = await TestWeb.start([{ name: 'news', pages: 6, fanout: 5, changesPerDay: 24 }], { seed: 5 });
    const log = pino({ level: process.env.VOLCRAWL_TEST_LOG ?? 'silent' });
    mgr = await startManager(
      { dataDir: dir, listen: ['/ip4/127.0.0.1/tcp/0'], httpPort: 0, httpHost: '127.0.0.1', strategy: 'iir', lan: true, warc: true, sync: false, tick: 200, routeConcurrency: 4, logLevel: 'silent' },
      log,
      // seconds-long intervals so the test sees several recrawls
      { groupIntervals: [0.05, 0.1, 0.2, 0.4, 0.8], recrawl: { minInterval: 0 }, retryDelayMs: 1000 },
    );
    const boot = mgr.node.multiaddrs().map((a) => (a.includes('/p2p/') ? a : `${a}/p2p/${mgr.node.peerId}`));
    for (let i = 0; i < 2; i++) {
      nodes.push(
        await VolunteerNode.start({
          privateKey: await generateKeyPair('Ed25519'),
          manager: mgr.node.peerId,
          createRunner: (sink) => new TaskManager({ threads: 2, queue: 2, allowPrivate: true, sink }),
          listen: ['/ip4/127.0.0.1/tcp/0'],
          bootstrap: boot,
          allowPrivateAddrs: true,
          seed: 100 + i,
          coordIntervalMs: 200,
          announceCheckMs: 500,
          inboundConnectionThreshold: 10_000,
          log: log.child({ node: i }),
        }),
      );
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    await mgr?.stop();
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('a changed page shows up in storage after its recrawl', async () => {
    const site = web.site('news');
    const res = await fetch(`${mgr.api.url}/api/channels`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: site.url('/'), depth: 2, delayMs: 0, group: 0 }),
    });
    expect(res.status).toBe(201);
    const ch = (await res.json()) as { id: string };
    const m = mgr.manager;
    await waitFor(async () => (await m.history(ch.id)).length >= 1, 90_000, 'the first crawl to be stored');
    const first = await mgr.storage.latest(ch.id);
    expect(first.length).toBe(6);
    expect(first.every((p) => p.version === 1)).toBe(true);
    const holders = (await m.history(ch.id)).map((h) => h.crawler);
    expect(nodes.map((n) => n.peerId)).toContain(holders[0]);

    // Time passes on the test web: pages change.
    web.clock.advance(DAY);
    const changed = [0, 1, 2, 3, 4, 5].filter((i) => site.versionAt(i) > site.versionAt(i, web.clock.now() - DAY));
    expect(changed.length).toBeGreaterThan(0);
    const url = site.pageUrl(changed[0]!);
    await waitFor(async () => (await mgr.storage.versions(ch.id, url)).length >= 2, 90_000, `a second version of ${url}`);
    const versions = await mgr.storage.versions(ch.id, url);
    expect(versions[1]!.text).not.toBe(versions[0]!.text);
    expect(versions[1]!.digest).not.toBe(versions[0]!.digest);
    const h = await m.history(ch.id);
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
