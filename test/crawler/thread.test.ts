// Crawls the local test web for real (no mocked fetch).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha1_32 } from '../../src/crawler/hash.js';
import { resultSchema } from '../../src/manager/domain/result-schema.js';
import { runTask } from '../../src/crawler/thread.js';
import { pagePath, TestWeb } from '../../testbed/web/testweb.js';
import type { ArchiveEntry } from '../../src/crawler/warc/record.js';
import { CollectSink, pathOf, siteTask } from './helpers.js';
import { sha1Base32 } from './warc-reader.js';

let web: TestWeb;
const pageIndex = (url: string): number => (pathOf(url) === '/' ? 0 : Number(/\/p\/(\d+)\.html$/.exec(pathOf(url))![1]));

beforeAll(async () => {
  web = await TestWeb.start(
    [
      { name: 'tree', pages: 156, fanout: 5, linksTo: ['other'] }, // depths 0..3 (1+5+25+125)
      { name: 'other', pages: 20 },
      { name: 'changing', pages: 31, fanout: 5, changesPerDay: 1 },
      { name: 'noetag', pages: 31, fanout: 5, etag: false },
      { name: 'bad', pages: 3, bad: true, linksTo: ['other'], slowMs: 5000 },
      { name: 'robots-disallow', pages: 31, robots: { status: 200, text: 'User-agent: *\nDisallow: /p/1\n\nUser-agent: volcrawl\nDisallow: /p/2\nCrawl-delay: 0.05\n' } },
      { name: 'robots-404', pages: 31, robots: 'none' },
      { name: 'robots-500', pages: 31, robots: { status: 503, text: 'busy' } },
      { name: 'robots-unreachable', pages: 31, robots: 'unreachable' },
      { name: 'robots-delay', pages: 4, robots: { status: 200, text: 'User-agent: *\nCrawl-delay: 3600\n' } },
      { name: 'robots-all', pages: 31, robots: { status: 200, text: 'User-agent: *\nDisallow: /\n' } },
      { name: 'gz', pages: 31, gzip: true },
    ],
    { seed: 7 },
  );
});
afterAll(async () => {
  await web.close();
});

describe('a crawl of one channel', () => {
  it('respects the maximum depth and uses one persistent connection with our User-Agent', async () => {
    const site = web.site('tree');
    const sink = new CollectSink();
    const task = siteTask(site, { maxDepth: 2 });
    const out = await runTask(task, sink, { allowPrivate: true });
    expect(out.status).toBe('completed');
    const fetched = new Set(sink.pages().map((p) => pathOf(p.url)));
    const expected = new Set(site.pagesWithinDepth(2).map(pagePath));
    expect(fetched).toEqual(expected);
    for (const p of sink.pages()) expect(p.depth).toBe(site.depthOf(pageIndex(p.url)));
    expect(out.outcomes['depth-limit']).toBeGreaterThan(0);
    expect(site.stats.paths[0]).toBe('/robots.txt');
    expect(site.stats.maxConnections).toBe(1);
    expect([...site.stats.userAgents][0]).toMatch(/^volcrawl\/.*\+https?:\/\//);
    // robots.txt (Disallow: /private/) and rel=nofollow were honoured
    expect(site.stats.paths.some((p) => p.startsWith('/private/'))).toBe(false);
    expect(site.stats.paths.some((p) => p.startsWith('/nofollow/'))).toBe(false);
    expect(out.outcomes['robots-disallowed']).toBeGreaterThan(0);
    expect(out.outcomes.nofollow).toBeGreaterThan(0);
    const f = sink.final();
    expect(f.stats.pagesFetched).toBe(expected.size);
    expect(f.stats.pagesChanged).toBe(expected.size);
    expect(f.stats.rttMs).not.toBeNull();
    const page0 = sink.pages().find((p) => pathOf(p.url) === '/')!;
    expect(page0.title).toBe('tree page 0 v0');
    expect(page0.text).toContain('version 0 of page 0 on tree');
    expect(page0.text).not.toContain('var x'); // scripts dropped
    expect(page0.etag).toBeDefined();
    expect(page0.lastModified).toBeDefined();
  });

  it('applies the URL filters to discovered links', async () => {
    const site = web.site('tree');
    const sink = new CollectSink();
    // Only pages whose number starts with 1 (1, 10..14, 100..) plus the seed.
    const task = siteTask(site, { filters: ['/p/1\\d*\\.html$'] });
    const out = await runTask(task, sink, { allowPrivate: true });
    const paths = sink.pages().map((p) => pathOf(p.url));
    expect(paths).toContain('/');
    for (const p of paths.filter((x) => x !== '/')) expect(p).toMatch(/^\/p\/1\d*\.html$/);
    expect(paths).toContain('/p/1.html');
    expect(paths).toContain('/p/10.html'); // a child of page 1 (children 6..10)
    expect(out.outcomes.filtered).toBeGreaterThan(0);
  });

  it('restricts the crawl to the path prefixes of the channel', async () => {
    const site = web.site('tree');
    const sink = new CollectSink();
    const task = siteTask(site, { scope: { origin: site.origin, pathPrefixes: ['/p/'] }, seeds: [site.url('/p/1.html')], maxDepth: 1 });
    await runTask(task, sink, { allowPrivate: true });
    const paths = sink.pages().map((p) => pathOf(p.url)).sort();
    expect(paths).toEqual(['/p/1.html', '/p/10.html', '/p/6.html', '/p/7.html', '/p/8.html', '/p/9.html']);
    // '/' is outside the channel: reported as an inter-site URL
    expect(sink.final().interSiteUrls).toContain(site.url('/'));
  });

  it('reports inter-site URLs once, and not at all when the task already knows them', async () => {
    const site = web.site('tree');
    const other = web.site('other');
    const sink = new CollectSink();
    await runTask(siteTask(site, { maxDepth: 3 }), sink, { allowPrivate: true });
    const inter = sink.final().interSiteUrls;
    expect(new Set(inter).size).toBe(inter.length);
    expect(inter).toContain(other.url('/'));
    expect(inter.filter((u) => u.startsWith(other.origin)).length).toBe(other.spec.pages); // every page of 'other' once
    const sink2 = new CollectSink();
    const known = inter.slice(0, 10);
    await runTask(siteTask(site, { maxDepth: 3, interSiteDigests: known.map((u) => sha1_32(u)) }), sink2, { allowPrivate: true });
    const inter2 = sink2.final().interSiteUrls;
    expect(inter2.length).toBe(inter.length - known.length);
    for (const k of known) expect(inter2).not.toContain(k);
  });

  it('stops at the page cap', async () => {
    const site = web.site('tree');
    const sink = new CollectSink();
    const out = await runTask(siteTask(site, { maxPages: 7 }), sink, { allowPrivate: true });
    expect(out.status).toBe('page-cap');
    expect(sink.pages().length).toBe(7);
    expect(out.outcomes['page-cap']).toBeGreaterThan(0);
  });

  it('stops at the deadline and still uploads what it has', async () => {
    const site = web.site('tree');
    const sink = new CollectSink();
    const out = await runTask(siteTask(site, { delayMs: 200, deadline: Date.now() + 700 }), sink, { allowPrivate: true });
    expect(out.status).toBe('deadline');
    const f = sink.final();
    expect(f.status).toBe('deadline');
    expect(sink.pages().length).toBeGreaterThan(0);
    expect(sink.pages().length).toBeLessThan(site.spec.pages);
  });

  it('uploads in several parts when there are many pages', async () => {
    const site = web.site('tree');
    const sink = new CollectSink();
    await runTask(siteTask(site), sink, { allowPrivate: true, limits: { pagesPerPart: 40 } });
    expect(sink.parts.length).toBeGreaterThan(3);
    expect(sink.parts.filter((p) => p.final).length).toBe(1);
    expect(sink.parts.at(-1)!.final).toBe(true);
    expect(sink.parts.map((p) => p.part)).toEqual([...sink.parts.keys()]);
    expect(sink.pages().length).toBe(site.spec.pages);
  });

  it('keeps FIFO (breadth-first) order when URLtodo spills to disk', async () => {
    const site = web.site('tree');
    const sink = new CollectSink();
    const out = await runTask(siteTask(site), sink, { allowPrivate: true, limits: { todoMemory: 3 } });
    expect(out.stats.urlsSpilled).toBeGreaterThan(50);
    const order = site.stats.paths.slice(-site.spec.pages);
    const depths = order.map((p) => site.depthOf(p === '/' ? 0 : Number(/(\d+)\.html$/.exec(p)![1])));
    for (let i = 1; i < depths.length; i++) expect(depths[i]!).toBeGreaterThanOrEqual(depths[i - 1]!);
    // children are fetched in the order their parents were
    const numbers = order.map((p) => (p === '/' ? 0 : Number(/(\d+)\.html$/.exec(p)![1])));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(sink.pages().length).toBe(site.spec.pages);
  });

  it('decompresses gzip bodies', async () => {
    const site = web.site('gz');
    const sink = new CollectSink();
    const out = await runTask(siteTask(site), sink, { allowPrivate: true });
    expect(out.stats.pagesChanged).toBe(site.spec.pages);
    expect(sink.pages()[0]!.text).toContain('version 0');
  });
});

describe('recrawl', () => {
  it('does not re-upload pages whose digest is known', async () => {
    const site = web.site('noetag');
    const sink = new CollectSink();
    await runTask(siteTask(site), sink, { allowPrivate: true });
    const digests = sink.pages().map((p) => p.digest);
    expect(digests.length).toBe(site.spec.pages);
    const sink2 = new CollectSink();
    const out = await runTask(siteTask(site, { pageDigests: digests }), sink2, { allowPrivate: true });
    expect(out.stats.pagesFetched).toBe(site.spec.pages);
    expect(out.stats.pagesUnchanged).toBe(site.spec.pages);
    expect(sink2.pages()).toEqual([]);
    expect(out.outcomes.unchanged).toBe(site.spec.pages);
    expect(sink2.validators().length).toBe(site.spec.pages);
  });

  it('skips parsing a known page whose body has its known digest, and still fetches every known page', async () => {
    const site = web.site('noetag');
    const sink = new CollectSink();
    await runTask(siteTask(site), sink, { allowPrivate: true });
    // Digests only (no validators): every page answers 200 with the same body.
    const known = sink.validators().map(({ url, depth, digest }) => ({ url, depth, digest }));
    const sink2 = new CollectSink();
    const out = await runTask(siteTask(site, { known }), sink2, { allowPrivate: true });
    expect(out.stats.pagesFetched).toBe(site.spec.pages);
    expect(out.stats.pagesNotModified).toBe(0);
    expect(out.stats.pagesUnchanged).toBe(site.spec.pages);
    expect(sink2.pages()).toEqual([]);
    expect(sink2.validators().map((v) => v.digest).sort()).toEqual(known.map((k) => k.digest).sort());
    // No links were taken from the unchanged pages: nothing beyond the known pages was discovered.
    expect(out.outcomes['robots-disallowed'] ?? 0).toBe(0);
    expect(out.outcomes.nofollow ?? 0).toBe(0);
  });

  it('uses conditional GET (304) for known validators, and uploads only what changed', async () => {
    const site = web.site('changing');
    const sink = new CollectSink();
    await runTask(siteTask(site), sink, { allowPrivate: true });
    expect(sink.pages().length).toBe(site.spec.pages);
    const validators = sink.validators();
    // Recrawl immediately: nothing changed, every page answers 304 with no body.
    const before = site.stats.notModified;
    const sink2 = new CollectSink();
    const out2 = await runTask(siteTask(site, { known: validators, pageDigests: validators.map((v) => v.digest) }), sink2, { allowPrivate: true });
    expect(site.stats.notModified - before).toBe(site.spec.pages);
    expect(out2.stats.pagesNotModified).toBe(site.spec.pages);
    expect(sink2.pages()).toEqual([]);
    // A virtual day later some pages changed (ground truth from the Poisson schedule).
    const t0 = web.clock.now();
    web.clock.advance(86_400_000);
    const changed = [...Array(site.spec.pages).keys()].filter((i) => site.changeTimes(i).some((c) => c > t0));
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.length).toBeLessThan(site.spec.pages);
    const sink3 = new CollectSink();
    const v2 = sink2.validators();
    const out3 = await runTask(siteTask(site, { known: v2, pageDigests: v2.map((v) => v.digest) }), sink3, { allowPrivate: true });
    expect(sink3.pages().map((p) => pathOf(p.url)).sort()).toEqual(changed.map(pagePath).sort());
    expect(out3.stats.pagesNotModified).toBe(site.spec.pages - changed.length);
    for (const p of sink3.pages()) expect(p.text).toContain(`version ${site.versionAt(pageIndex(p.url))} of page ${pageIndex(p.url)}`);
  });
});

describe('robots.txt', () => {
  it('honours disallow rules for our token and the crawl delay', async () => {
    const site = web.site('robots-disallow');
    const sink = new CollectSink();
    const out = await runTask(siteTask(site, { maxDepth: 1 }), sink, { allowPrivate: true });
    const paths = sink.pages().map((p) => pathOf(p.url));
    // The volcrawl group (Disallow: /p/2) replaces the * group (Disallow: /p/1).
    expect(paths).not.toContain('/p/2.html');
    expect(paths).toContain('/p/1.html');
    expect(out.stats.crawlDelayMs).toBe(50);
  });

  it('caps a huge Crawl-delay', async () => {
    const site = web.site('robots-delay');
    const sink = new CollectSink();
    const out = await runTask(siteTask(site, { maxPages: 1 }), sink, { allowPrivate: true, limits: { maxCrawlDelayMs: 100 } });
    expect(out.stats.crawlDelayMs).toBe(100);
  });

  it('treats a 404 robots.txt as allow-all', async () => {
    const site = web.site('robots-404');
    const sink = new CollectSink();
    const out = await runTask(siteTask(site), sink, { allowPrivate: true });
    expect(out.status).toBe('completed');
    expect(site.stats.paths.some((p) => p.startsWith('/private/'))).toBe(true);
  });

  it.each(['robots-500', 'robots-unreachable'])('treats %s as disallow-all for now', async (name) => {
    const site = web.site(name);
    const sink = new CollectSink();
    const out = await runTask(siteTask(site), sink, { allowPrivate: true });
    expect(out.status).toBe('robots-unavailable');
    expect(sink.final().status).toBe('robots-unavailable');
    expect(sink.final().reason).toMatch(/robots\.txt unavailable/);
    expect(site.stats.paths.filter((p) => p !== '/robots.txt')).toEqual([]);
  });

  it('fetches nothing when everything is disallowed', async () => {
    const site = web.site('robots-all');
    const sink = new CollectSink();
    const out = await runTask(siteTask(site), sink, { allowPrivate: true });
    expect(out.status).toBe('completed');
    expect(out.outcomes['robots-disallowed']).toBe(1);
    expect(site.stats.paths).toEqual(['/robots.txt']);
  });
});

describe('bad responses', () => {
  it('end in their reported outcomes, never a crash or a hang', async () => {
    const site = web.site('bad');
    const sink = new CollectSink();
    // What the crawl hands an archive (without archiveErrors): robots.txt, redirects, pages read whole.
    const archived: ArchiveEntry[] = [];
    const out = await runTask(siteTask(site, { maxDepth: 30 }), sink, {
      allowPrivate: true,
      limits: { headersTimeoutMs: 300, bodyTimeoutMs: 300, maxUrlLength: 1024 },
      archive: { archive: (e) => void archived.push(e) },
    });
    expect(out.status).toBe('completed');
    const f = sink.final();
    const byUrl = new Map(f.errors.map((e) => [pathOf(e.url), e.outcome]));
    expect(byUrl.get('/bad/redirect/chain/9')).toBe('redirect-limit');
    expect(byUrl.get('/bad/redirect/nolocation')).toBe('redirect-invalid');
    expect(byUrl.get('/bad/slow-headers')).toBe('headers-timeout');
    expect(byUrl.get('/bad/slow-body')).toBe('body-timeout');
    expect(byUrl.get('/bad/broken')).toBe('connection-error');
    expect(byUrl.get('/bad/huge')).toBe('too-large');
    expect(byUrl.get('/bad/huge-chunked')).toBe('too-large');
    expect(byUrl.get('/bad/bomb.html')).toBe('decompressed-too-large');
    expect(byUrl.get('/bad/bad-encoding.html')).toBe('bad-encoding');
    expect(byUrl.get('/bad/404')).toBe('http-4xx');
    expect(byUrl.get('/bad/500')).toBe('http-5xx');
    const o = f.outcomes;
    expect(o['redirect-followed']).toBeGreaterThanOrEqual(3);
    expect(o['redirect-offsite']).toBe(1);
    expect(o['not-html']).toBe(1);
    expect(o['charset-fallback']).toBe(1);
    expect(o.noindex).toBe(1);
    expect(o['url-too-long']).toBe(1); // the spider trap ends at the URL length cap
    const pages = new Map(sink.pages().map((p) => [pathOf(p.url), p]));
    expect(pages.get('/bad/redirect/chain/3')!.finalUrl).toBe(site.url('/bad/redirect/chain/0'));
    expect(pages.get('/bad/latin1.html')!.text).toContain('café crème brûlée');
    expect(pages.get('/bad/noindex.html')!.text).toBe('');
    expect(site.stats.paths).not.toContain('/bad/never-followed');
    expect(pages.has('/bad/malformed.html')).toBe(true);
    // Oversized validators are dropped, long titles and content types cut, so the next task stays valid.
    const odd = pages.get('/bad/huge-etag.html')!;
    expect(odd.etag).toBeUndefined();
    expect(odd.lastModified).toBeUndefined();
    expect(odd.title!.length).toBeLessThanOrEqual(1000);
    expect(odd.contentType.length).toBeLessThanOrEqual(256);
    // the cross-host redirect target is an inter-site URL
    expect(f.interSiteUrls).toContain(web.site('other').url('/from-redirect'));
    expect(f.stats.pagesFailed).toBeGreaterThanOrEqual(11);
    // Every part satisfies the storage side's upload schema (contract with src/manager).
    for (const p of sink.parts) expect(resultSchema.safeParse(p).error).toBeUndefined();
    const archivedPaths = archived.map((e) => (e.kind === 'conversion' ? '' : `${e.exchange.status} ${pathOf(e.exchange.url)}`));
    expect(archived.every((e) => e.kind === 'response')).toBe(true);
    expect(archivedPaths).toContain('200 /robots.txt');
    for (const hop of ['3', '2', '1']) expect(archivedPaths).toContain(`301 /bad/redirect/chain/${hop}`);
    expect(archivedPaths).toContain('200 /bad/redirect/chain/0');
    expect(archivedPaths).toContain('302 /bad/redirect/offsite');
    expect(archivedPaths).toContain('302 /bad/redirect/nolocation');
    expect(archivedPaths).toContain('200 /bad/latin1.html');
    // Not read whole or not wanted: nothing to archive; 4xx/5xx only with archiveErrors.
    for (const p of ['/bad/slow-headers', '/bad/slow-body', '/bad/broken', '/bad/huge', '/bad/huge-chunked', '/bad/bomb.html', '/bad/bad-encoding.html', '/bad/image.png', '/bad/404', '/bad/500']) {
      expect(archivedPaths.filter((x) => x.endsWith(` ${p}`))).toEqual([]);
    }
    // The latin1 page's payload is the bytes sent (not re-encoded), and every payload digest is the body's.
    const latin1 = archived.find((e) => e.kind === 'response' && pathOf(e.exchange.url) === '/bad/latin1.html')!;
    if (latin1.kind === 'response') expect(Buffer.from(latin1.exchange.body).toString('latin1')).toContain('caf\u00e9 cr\u00e8me');
    for (const e of archived) if (e.kind === 'response' && e.exchange.payloadDigest) expect(e.exchange.payloadDigest).toBe(sha1Base32(e.exchange.body));
  });

  it('reports an unresolvable host as refused', async () => {
    const sink = new CollectSink();
    const task = siteTask(web.site('tree'));
    const bogus = { ...task, scope: { origin: 'http://no-such-host.invalid', pathPrefixes: ['/'] }, seeds: ['http://no-such-host.invalid/'] };
    const out = await runTask(bogus, sink, { allowPrivate: true });
    expect(out.status).toBe('refused');
    expect(sink.final().outcomes['dns-failure']).toBe(1);
  });
});

describe("the volunteer's safety", () => {
  it('refuses loopback addresses by default', async () => {
    const site = web.site('tree');
    const before = site.stats.requests;
    const sink = new CollectSink();
    const out = await runTask(siteTask(site), sink);
    expect(out.status).toBe('refused');
    expect(sink.final().outcomes['private-address']).toBe(1);
    expect(sink.final().reason).toMatch(/private/);
    expect(site.stats.requests).toBe(before);
  });

  it('refuses a hostname that resolves to 127.0.0.1 (localhost)', async () => {
    const site = web.site('tree');
    const before = site.stats.requests;
    const origin = `http://localhost:${site.port}`;
    const task = siteTask(site);
    const sink = new CollectSink();
    const out = await runTask({ ...task, scope: { origin, pathPrefixes: ['/'] }, seeds: [origin + '/'] }, sink);
    expect(out.status).toBe('refused');
    expect(sink.final().outcomes['private-address']).toBe(1);
    expect(site.stats.requests).toBe(before);
    // ...and allowPrivate lets it through
    const sink2 = new CollectSink();
    const out2 = await runTask({ ...task, id: 'lh2', scope: { origin, pathPrefixes: ['/'] }, seeds: [origin + '/'], maxDepth: 0 }, sink2, { allowPrivate: true });
    expect(out2.status).toBe('completed');
    expect(sink2.pages().length).toBe(1);
  });
});
