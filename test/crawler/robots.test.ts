// robots.txt as site owners write it. Cases from RFC 9309 (section numbers
// in the names) and from the behaviour Google documents and tests in its
// open-source parser (google/robotstxt, robots_test.cc), plus the issue's
// three opt-outs that robots-parser missed; then real fetches on loopback:
// a file that cannot be read in full is never "allow everything".
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { groupFor, parseRobotsTxt, productToken, robotsRules } from '../../src/crawler/robots.js';
import { runTask } from '../../src/crawler/thread.js';
import { parseTask } from '../../src/crawler/task.js';
import { CollectSink } from './helpers.js';

const BASE = 'http://site.example';
/** Is `path` allowed for `token` by `txt`? */
function allowed(txt: string | Buffer, path: string, token = 'volcrawl'): boolean {
  return robotsRules(txt, token).isAllowed(BASE + path);
}

describe('the issue: opt-outs as site owners write them', () => {
  it('a group for "volcrawl crawler" applies to the volcrawl token (product token up to the first non-token character)', () => {
    const txt = 'User-agent: *\nAllow: /\n\nUser-agent: volcrawl crawler\nDisallow: /\n';
    expect(allowed(txt, '/page')).toBe(false);
    expect(allowed(txt, '/page', 'otherbot')).toBe(true);
  });
  it('a Sitemap line between two user-agent lines does not split the group (RFC 9309 §2.2.4)', () => {
    const txt = 'User-agent: volcrawl\nSitemap: https://site.example/sitemap.xml\nUser-agent: otherbot\nDisallow: /\n';
    expect(allowed(txt, '/page')).toBe(false);
    expect(allowed(txt, '/page', 'otherbot')).toBe(false);
    expect(parseRobotsTxt(txt).sitemaps).toEqual(['https://site.example/sitemap.xml']);
    // Nor does an unknown record (google/robotstxt ID_LineSyntax_Groups_OtherRules).
    expect(allowed('User-agent: volcrawl\nInvalid-Unknown-Line: x\nUser-agent: *\nDisallow: /\n', '/')).toBe(false);
  });
  it('"Disallow /" without its colon is still read; three words without a colon are not', () => {
    expect(allowed('User-agent: volcrawl\nDisallow /\n', '/page')).toBe(false);
    expect(allowed('user-agent volcrawl\ndisallow /\n', '/page')).toBe(false);
    expect(allowed('User-agent: volcrawl\nDisallow / private\n', '/page')).toBe(true);
  });
  it('a UTF-8 byte order mark, or a partial one, before the first line is skipped', () => {
    const body = 'User-agent: volcrawl\nDisallow: /\n';
    for (const bom of [[0xef, 0xbb, 0xbf], [0xef, 0xbb], [0xef]]) {
      expect(allowed(Buffer.concat([Buffer.from(bom), Buffer.from(body)]), '/x')).toBe(false);
    }
    // A broken mark is not a mark: the first line is garbage (google/robotstxt ID_UTF8ByteOrderMarkIsSkipped).
    expect(allowed(Buffer.concat([Buffer.from([0xef, 0x11, 0xbf]), Buffer.from(body)]), '/x')).toBe(true);
    expect(allowed(Buffer.concat([Buffer.from([0xef, 0x11, 0xbf]), Buffer.from(`\n${body}`)]), '/x')).toBe(false);
  });
});

describe('RFC 9309 §2.2.1: the user-agent line', () => {
  it('matches the product token case-insensitively, with or without a version', () => {
    for (const ua of ['VOLCRAWL', 'VolCrawl/2.1', 'volcrawl (+https://example.org)', '  volcrawl  ']) {
      expect(allowed(`User-agent: ${ua}\nDisallow: /\n`, '/x')).toBe(false);
    }
    expect(allowed('User-agent: volcrawl-images\nDisallow: /\n', '/x')).toBe(true); // another product token
    expect(productToken('Foo_Bar-baz/1')).toBe('foo_bar-baz');
    expect(productToken('* # everyone')).toBe('*');
    expect(productToken('*bot')).toBe('');
  });
  it('merges every group that names us (the RFC\'s merge example)', () => {
    const txt = 'user-agent: volcrawl\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: otherbot\ndisallow: /x\n\nuser-agent: volcrawl\ndisallow: /baz\n';
    expect(['/foo', '/bar', '/baz'].map((p) => allowed(txt, p))).toEqual([false, false, false]);
    expect(allowed(txt, '/x')).toBe(true);
  });
  it('falls back to the "*" groups, and to no rules without one', () => {
    const txt = 'user-agent: *\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: BazBot\ndisallow: /baz\n';
    expect(allowed(txt, '/foo')).toBe(false);
    expect(allowed(txt, '/baz')).toBe(true);
    expect(groupFor(parseRobotsTxt('user-agent: a\ndisallow: /\n'), 'volcrawl').matched).toBe('none');
    expect(allowed('user-agent: a\ndisallow: /\n', '/x')).toBe(true);
    expect(allowed('', '/x')).toBe(true);
  });
  it('a group naming us without rules allows everything, even when "*" disallows it', () => {
    expect(allowed('User-agent: *\nDisallow: /\n\nUser-agent: volcrawl\n', '/x')).toBe(true);
  });
  it('groups: lines before the first user-agent are ignored, blank lines do not end a group (google ID_LineSyntax_Groups)', () => {
    const txt = 'allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\nuser-agent: volcrawl\ndisallow: /\nallow: /y/\n\n\nallow: /w/\nuser-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n';
    expect(allowed(txt, '/y/c')).toBe(true);
    expect(allowed(txt, '/w/a')).toBe(true);
    expect(allowed(txt, '/z/d')).toBe(false);
    expect(allowed(txt, '/foo/bar/')).toBe(false);
    expect(allowed(txt, '/z/d', 'BazBot')).toBe(true);
  });
  it('keys are case-insensitive and common misspellings are read', () => {
    expect(allowed('USER-AGENT: volcrawl\nDISALLOW: /\nALLOW: /x/\n', '/a')).toBe(false);
    expect(allowed('uSeR-aGeNt: volcrawl\nAlLoW: /x/\ndIsAlLoW: /\n', '/x/y')).toBe(true);
    expect(allowed('useragent: volcrawl\ndisalow: /\n', '/a')).toBe(false);
  });
});

describe('RFC 9309 §2.2.2–2.2.3: allow, disallow and special characters', () => {
  const url = '/x/page.html';
  it('the longest match wins, an allow wins a tie (google ID_LongestMatch)', () => {
    expect(allowed('user-agent: volcrawl\ndisallow: /x/page.html\nallow: /x/\n', url)).toBe(false);
    expect(allowed('user-agent: volcrawl\nallow: /x/page.html\ndisallow: /x/\n', url)).toBe(true);
    expect(allowed('user-agent: volcrawl\nallow: /x/page.html\ndisallow: /x/\n', '/x/')).toBe(false);
    expect(allowed('user-agent: volcrawl\ndisallow: \nallow: \n', url)).toBe(true);
    expect(allowed('user-agent: volcrawl\ndisallow: /\nallow: /\n', url)).toBe(true);
    expect(allowed('user-agent: volcrawl\ndisallow: /x\nallow: /x/\n', '/x')).toBe(false);
    expect(allowed('user-agent: volcrawl\ndisallow: /x\nallow: /x/\n', '/x/')).toBe(true);
    expect(allowed('user-agent: volcrawl\ndisallow: /x/page.html\nallow: /x/page.html\n', url)).toBe(true);
    expect(allowed('user-agent: volcrawl\nallow: /page\ndisallow: /*.html\n', '/page.html')).toBe(false);
    expect(allowed('user-agent: volcrawl\nallow: /page\ndisallow: /*.html\n', '/page')).toBe(true);
    expect(allowed('user-agent: volcrawl\nallow: /x/page.\ndisallow: /*.html\n', url)).toBe(true);
    expect(allowed('user-agent: volcrawl\nallow: /x/page.\ndisallow: /*.html\n', '/x/y.html')).toBe(false);
    expect(allowed('User-agent: *\nDisallow: /x/\nUser-agent: volcrawl\nDisallow: /y/\n', '/x/page')).toBe(true);
    expect(allowed('User-agent: *\nDisallow: /x/\nUser-agent: volcrawl\nDisallow: /y/\n', '/y/page')).toBe(false);
  });
  it('matching is case-sensitive and starts at the first octet of the path', () => {
    expect(allowed('user-agent: volcrawl\ndisallow: /x/\n', '/x/y')).toBe(false);
    expect(allowed('user-agent: volcrawl\ndisallow: /X/\n', '/x/y')).toBe(true);
    expect(allowed('user-agent: volcrawl\ndisallow: x/\n', '/x/y')).toBe(true);
  });
  it('"*" matches any run, "$" only at the end anchors, "#" starts a comment', () => {
    const a = 'User-agent: volcrawl\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n';
    expect(allowed(a, '/foo/bar/quz')).toBe(false);
    expect(allowed(a, '/foo/quz')).toBe(true);
    expect(allowed(a, '/foo//quz')).toBe(true);
    expect(allowed(a, '/foo/bax/quz')).toBe(true);
    const b = 'User-agent: volcrawl\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n';
    expect(allowed(b, '/foo/bar')).toBe(false);
    expect(allowed(b, '/foo/bar/qux')).toBe(true);
    expect(allowed(b, '/foo/bar/')).toBe(true);
    const c = 'User-agent: volcrawl\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n';
    expect(allowed(c, '/foo/bar')).toBe(true);
    expect(allowed(c, '/foo/quz')).toBe(false);
    expect(allowed('User-agent: volcrawl\nDisallow: /*.php$\n', '/a/b.php')).toBe(false);
    expect(allowed('User-agent: volcrawl\nDisallow: /*.php$\n', '/a/b.php?x=1')).toBe(true);
    expect(allowed('User-agent: volcrawl\nDisallow: /a*b*c$\n', '/aXbYbZc')).toBe(false);
    expect(allowed('User-agent: volcrawl\nDisallow: /a*b*c$\n', '/aXbYbZcd')).toBe(true);
    expect(allowed('User-agent: volcrawl\nDisallow: /a$b\n', '/a$b')).toBe(false); // "$" inside a pattern is literal
    expect(allowed('User-agent: volcrawl\nDisallow: /a$b\n', '/a')).toBe(true);
  });
  it('compares percent-normalised octets (the RFC\'s encoding table)', () => {
    expect(allowed('User-agent: volcrawl\nDisallow: /\nAllow: /foo/bar?baz=quz\n', '/foo/bar?baz=quz')).toBe(true);
    expect(allowed('User-agent: volcrawl\nDisallow: /\nAllow: /foo/bar?baz=https%3A%2F%2Ffoo.bar\n', '/foo/bar?baz=https%3a%2f%2ffoo.bar')).toBe(true);
    expect(allowed('User-agent: volcrawl\nDisallow: /\nAllow: /foo/bar/ツ\n', '/foo/bar/%E3%83%84')).toBe(true);
    expect(allowed('User-agent: volcrawl\nDisallow: /\nAllow: /foo/bar/ツ\n', '/foo/bar/ツ')).toBe(true); // URL() escapes it the same way
    expect(allowed('User-agent: volcrawl\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n', '/foo/bar/ツ')).toBe(true);
    expect(allowed('User-agent: volcrawl\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n', '/foo/bar/baz')).toBe(true);
    expect(allowed('User-agent: volcrawl\nDisallow: /path/file-with-a-%2A.html\n', '/path/file-with-a-*.html')).toBe(false);
    expect(allowed('User-agent: volcrawl\nDisallow: /path/foo-%24\n', '/path/foo-$')).toBe(false);
    expect(allowed('User-agent: volcrawl\nDisallow: /path/foo-%24\n', '/path/foo-')).toBe(true);
  });
  it('/robots.txt itself is always allowed; Crawl-delay is read from our group', () => {
    expect(allowed('User-agent: *\nDisallow: /\n', '/robots.txt')).toBe(true);
    expect(robotsRules('User-agent: *\nCrawl-delay: 7\nDisallow: /tmp\n\nUser-agent: volcrawl\nCrawl-delay: 0.5\nDisallow: /x\n', 'volcrawl').crawlDelayMs).toBe(500);
    // Crawl-delay is not a rule: it does not end a group, so both agents share the first one.
    expect(robotsRules('User-agent: *\nCrawl-delay: 7\nUser-agent: volcrawl\nCrawl-delay: 0.5\n', 'volcrawl').crawlDelayMs).toBe(7000);
    expect(robotsRules('User-agent: *\nCrawl-delay: 7\n', 'volcrawl').crawlDelayMs).toBe(7000);
    expect(robotsRules('User-agent: volcrawl\nCrawl-delay: soon\n', 'volcrawl').crawlDelayMs).toBe(0);
  });
});

// ---------------------------------------------------------------------------
// Fetched for real: what the crawler does with each kind of robots.txt.

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  servers = [];
});

/** A loopback site whose robots.txt `robots` answers; every other path is a small page linking to /a and /b. Counts page requests. */
async function site(robots: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ origin: string; pages: string[] }> {
  const pages: string[] = [];
  const server = createServer((req, res) => {
    if (req.url === '/robots.txt') return robots(req, res);
    pages.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body><a href="/a">a</a> <a href="/b">b</a></body></html>');
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pages };
}

async function crawl(origin: string, maxRobotsBytes?: number) {
  const task = parseTask({ id: `robots-${origin.split(':')[2]}`, scope: { origin }, seeds: [`${origin}/`, `${origin}/public/x`], maxDepth: 2, deadline: Date.now() + 60_000, delayMs: 0 });
  const sink = new CollectSink();
  return runTask(task, sink, { allowPrivate: true, ...(maxRobotsBytes ? { limits: { maxRobotsBytes } } : {}) });
}

const text = (body: string | Buffer, headers: Record<string, string> = {}) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/plain', ...headers });
  res.end(body);
};

describe('fetching robots.txt', () => {
  it('each of the issue\'s opt-outs keeps every page of the site unfetched', async () => {
    for (const body of ['User-agent: *\nAllow: /\n\nUser-agent: volcrawl crawler\nDisallow: /\n', 'User-agent: volcrawl\nSitemap: /s.xml\nUser-agent: otherbot\nDisallow: /\n', 'User-agent: volcrawl\nDisallow /\n', Buffer.concat([Buffer.from([0xef, 0xbb]), Buffer.from('User-agent: volcrawl\nDisallow: /\n')])]) {
      const s = await site(text(body));
      const out = await crawl(s.origin);
      expect(out.status).toBe('completed');
      expect(out.outcomes['robots-disallowed']).toBe(2);
      expect(s.pages).toEqual([]);
    }
  });

  it('a gzip robots.txt cut at the size limit is unreadable: the site is disallowed, not allowed', async () => {
    // 40 KB of rules, gzipped; the parsing limit is set below its compressed size.
    const rules = 'User-agent: *\n' + Array.from({ length: 2000 }, (_, i) => `Disallow: /private-${i * 7919}/\n`).join('');
    const gz = gzipSync(rules);
    const s = await site(text(gz, { 'content-encoding': 'gzip' }));
    const out = await crawl(s.origin, Math.floor(gz.length / 2));
    expect(out.status).toBe('robots-unavailable');
    expect(s.pages).toEqual([]);
  });

  it('an undecodable robots.txt is unreachable, not "allow everything"', async () => {
    const s = await site(text(Buffer.from('this is not gzip at all'), { 'content-encoding': 'gzip' }));
    const out = await crawl(s.origin);
    expect(out.status).toBe('robots-unavailable');
    expect(s.pages).toEqual([]);
  });

  it('a robots.txt cut at the limit loses its partial last line, which could have allowed more', async () => {
    // Cut inside "Allow: /public/only-this": "Allow: /pub" would allow all of /public/.
    const body = 'User-agent: *\nDisallow: /\nAllow: /public/only-this\n';
    const s = await site(text(body));
    const out = await crawl(s.origin, body.indexOf('/public') + 4);
    expect(out.status).toBe('completed');
    expect(s.pages).toEqual([]);
  });

  it('a 503 is unreachable (disallow all); a 404 is no robots.txt (allow all)', async () => {
    const down = await site((_q, res) => {
      res.writeHead(503);
      res.end('busy');
    });
    expect((await crawl(down.origin)).status).toBe('robots-unavailable');
    expect(down.pages).toEqual([]);
    const none = await site((_q, res) => {
      res.writeHead(404);
      res.end('no');
    });
    expect((await crawl(none.origin)).status).toBe('completed');
    expect(none.pages.sort()).toEqual(['/', '/a', '/b', '/public/x']);
  });
});
