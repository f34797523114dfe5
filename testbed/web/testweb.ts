// The local test web: a real HTTP server per generated site on 127.0.0.1
// (one port per site, so each site is its own origin). Sites have a link
// structure of chosen size and depth, robots.txt variants, ETag and
// Last-Modified validators, pages that change on a seeded Poisson schedule
// driven by a clock you advance, and (on request) every bad response a
// crawler meets: redirects and loops, slow/broken/oversized bodies, a gzip
// bomb, non-HTML, odd charsets, malformed HTML and spider traps. The ground
// truth (when each page changed) is queryable to measure freshness.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createRng, deriveSeed, exponential, randomInt, type Rng } from '../../src/rng.js';

export type RobotsSpec =
  | { status: number; text?: string; delayMs?: number }
  | 'none' // 404
  | 'unreachable'; // connection dropped

export interface SiteSpec {
  name: string;
  /** Number of pages in the generated tree (page 0 is '/'). */
  pages: number;
  /** Children per page (default 5). Page i's children are fanout*i+1 .. fanout*i+fanout. */
  fanout?: number;
  /** Approximate page size in bytes (default 2000). */
  pageBytes?: number;
  /** robots.txt (default: 200 with "Disallow: /private/"). */
  robots?: RobotsSpec;
  /** Mean page changes per page per virtual day (0 = static, default). */
  changesPerDay?: number;
  /** Other sites (by name) each page links to: the inter-site URLs. */
  linksTo?: string[];
  /** Serve the bad-response paths (/bad/...) and link them from '/'. */
  bad?: boolean;
  /** Send ETag (default true) and Last-Modified (default true). */
  etag?: boolean;
  lastModified?: boolean;
  /** gzip pages when the client accepts it (default false). */
  gzip?: boolean;
  /** Delay for /bad/slow-* endpoints, ms (default 3000). */
  slowMs?: number;
  /** Host name in this site's URLs (default: the web's host), e.g. "localhost" for a site reached through DNS. */
  host?: string;
  /** Loopback address this site listens on (default 127.0.0.1), e.g. 127.0.0.2 for a second address. */
  bindHost?: string;
  /** Serve the archive cases (/warc/...: repeated and Latin-1 headers with an
   * odd reason phrase, a chunked body, a redirect) and link them from '/'. */
  archiveCases?: boolean;
  /** Keep the last body sent for each path (`site.sentBodies`), as it went on the wire. */
  recordBodies?: boolean;
}

export interface TestWebOptions {
  seed?: number;
  /** Virtual clock start, epoch ms (default 2026-01-01). */
  epoch?: number;
  /** A clock to share (e.g. with a simulation); its current time is the epoch. */
  clock?: TestClock;
  host?: string;
}

/** A virtual clock for page changes. */
export class TestClock {
  constructor(private t: number) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError('the clock only moves forward');
    this.t += ms;
  }
  set(t: number): void {
    if (t < this.t) throw new RangeError('the clock only moves forward');
    this.t = t;
  }
}

interface SiteStats {
  requests: number;
  notModified: number;
  robotsRequests: number;
  /** Paths in request order. */
  paths: string[];
  /** Highest number of simultaneously open connections. */
  maxConnections: number;
  openConnections: number;
  connections: number;
  userAgents: Set<string>;
}

const DAY = 86_400_000;
const WORDS = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum'.split(' ');

let fillerCache: string | null = null;
function filler(): string {
  if (fillerCache) return fillerCache;
  const rng = createRng(42);
  const parts: string[] = [];
  let len = 0;
  while (len < 1_100_000) {
    const w = WORDS[randomInt(rng, WORDS.length)] as string;
    parts.push(w);
    len += w.length + 1;
  }
  fillerCache = parts.join(' ');
  return fillerCache;
}

let bombCache: Buffer | null = null;
/** 32 MiB of spaces gzipped to ~32 KiB (built on first use). */
function bomb(): Buffer {
  bombCache ??= gzipSync(Buffer.alloc(32 * 1024 * 1024, 0x20), { level: 9 });
  return bombCache;
}

export class Site {
  readonly stats: SiteStats = { requests: 0, notModified: 0, robotsRequests: 0, paths: [], maxConnections: 0, openConnections: 0, connections: 0, userAgents: new Set() };
  server!: Server;
  port = 0;
  private readonly fanout: number;
  private readonly pageBytes: number;
  private readonly changeRng: Rng[] = [];
  private readonly changes: number[][] = [];
  private readonly sockets = new Set<Socket>();
  /** The last body sent per path (with `recordBodies`), content-encoded as sent. */
  readonly sentBodies = new Map<string, Buffer>();

  constructor(
    readonly spec: SiteSpec,
    private readonly web: TestWeb,
    private readonly seed: number,
  ) {
    this.fanout = spec.fanout ?? 5;
    this.pageBytes = spec.pageBytes ?? 2000;
  }

  get origin(): string {
    return `http://${this.spec.host ?? this.spec.bindHost ?? this.web.host}:${this.port}`;
  }

  url(path = '/'): string {
    return this.origin + path;
  }

  /** The URL of page i. */
  pageUrl(i: number): string {
    return this.url(pagePath(i));
  }

  /** Depth of page i in the link tree (page 0 = 0). */
  depthOf(i: number): number {
    let d = 0;
    while (i > 0) {
      i = Math.floor((i - 1) / this.fanout);
      d++;
    }
    return d;
  }

  /** Indexes of the pages with depth ≤ d. */
  pagesWithinDepth(d: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.spec.pages; i++) if (this.depthOf(i) <= d) out.push(i);
    return out;
  }

  /** Ground truth: the times page i changed, up to time t (default now). */
  changeTimes(i: number, t = this.web.clock.now()): number[] {
    const rate = this.spec.changesPerDay ?? 0;
    if (rate <= 0) return [];
    let ch = this.changes[i];
    let rng = this.changeRng[i];
    if (!ch || !rng) {
      ch = [];
      rng = createRng(deriveSeed(this.seed, `${this.spec.name}/${i}`));
      this.changes[i] = ch;
      this.changeRng[i] = rng;
    }
    const mean = DAY / rate;
    while (ch.length === 0 || (ch[ch.length - 1] as number) <= t) {
      const prev = ch.length === 0 ? this.web.epoch : (ch[ch.length - 1] as number);
      ch.push(prev + Math.max(1, exponential(rng, mean)));
    }
    return ch.filter((c) => c <= t);
  }

  /** Version of page i at time t: the number of changes so far. */
  versionAt(i: number, t = this.web.clock.now()): number {
    return this.changeTimes(i, t).length;
  }

  lastModifiedAt(i: number, t = this.web.clock.now()): number {
    const c = this.changeTimes(i, t);
    return c.length ? (c[c.length - 1] as number) : this.web.epoch;
  }

  async listen(): Promise<void> {
    this.server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => this.handle(req, res));
    this.server.on('connection', (sock: Socket) => {
      this.sockets.add(sock);
      this.stats.connections++;
      this.stats.openConnections++;
      this.stats.maxConnections = Math.max(this.stats.maxConnections, this.stats.openConnections);
      sock.on('close', () => {
        this.sockets.delete(sock);
        this.stats.openConnections--;
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, this.spec.bindHost ?? this.web.bindHost, resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const st = this.stats;
    st.requests++;
    const path = (req.url ?? '/').split('#')[0] as string;
    if (st.paths.length < 200_000) st.paths.push(path);
    const ua = req.headers['user-agent'];
    if (ua && st.userAgents.size < 10) st.userAgents.add(ua);
    if (path === '/robots.txt') return this.robots(req, res);
    if (this.spec.bad && path.startsWith('/bad/')) return this.bad(path, req, res);
    if (this.spec.archiveCases && path.startsWith('/warc/')) return this.archiveCase(path, req, res);
    let i: number;
    if (path === '/') i = 0;
    else {
      const m = /^\/p\/(\d+)\.html$/.exec(path);
      i = m ? Number(m[1]) : -1;
      if (path.startsWith('/private/') || path.startsWith('/nofollow/')) {
        const m2 = /(\d+)\.html$/.exec(path);
        return this.sendHtml(req, res, `<html><head><title>${path}</title></head><body>${path} ${m2 ? m2[1] : ''}</body></html>`);
      }
    }
    if (i < 0 || i >= this.spec.pages) {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><body>not found</body></html>');
      return;
    }
    this.page(i, req, res);
  }

  private robots(req: IncomingMessage, res: ServerResponse): void {
    this.stats.robotsRequests++;
    const spec = this.spec.robots ?? { status: 200, text: 'User-agent: *\nDisallow: /private/\n' };
    if (spec === 'unreachable') {
      req.socket.destroy();
      return;
    }
    if (spec === 'none') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no robots here');
      return;
    }
    const send = () => {
      res.writeHead(spec.status, { 'content-type': 'text/plain' });
      res.end(spec.text ?? '');
    };
    if (spec.delayMs) setTimeout(send, spec.delayMs);
    else send();
  }

  private page(i: number, req: IncomingMessage, res: ServerResponse): void {
    const now = this.web.clock.now();
    const version = this.versionAt(i, now);
    const lm = this.lastModifiedAt(i, now);
    const etag = `"${this.spec.name}-${i}-v${version}"`;
    const lmHttp = new Date(lm).toUTCString();
    const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8' };
    const useEtag = this.spec.etag !== false;
    const useLm = this.spec.lastModified !== false;
    if (useEtag) headers['etag'] = etag;
    if (useLm) headers['last-modified'] = lmHttp;
    const inm = req.headers['if-none-match'];
    const ims = req.headers['if-modified-since'];
    let notModified = false;
    if (useEtag && inm !== undefined) notModified = inm.split(',').some((t) => t.trim() === etag || t.trim() === '*');
    else if (useLm && ims !== undefined) {
      const since = Date.parse(ims);
      notModified = Number.isFinite(since) && Math.floor(lm / 1000) * 1000 <= since;
    }
    if (notModified) {
      this.stats.notModified++;
      res.writeHead(304, headers);
      res.end();
      return;
    }
    this.sendHtml(req, res, this.render(i, version), headers);
  }

  /** The HTML of page i at a version. */
  render(i: number, version: number): string {
    const name = this.spec.name;
    const links: string[] = ['<a href="/">home</a>', '<a href="#top">top</a>'];
    if (i > 0) links.push(`<a href="${pagePath(Math.floor((i - 1) / this.fanout))}">parent</a>`);
    for (let c = this.fanout * i + 1; c <= this.fanout * i + this.fanout && c < this.spec.pages; c++) {
      links.push(`<a href="${pagePath(c)}">page ${c}</a>`);
    }
    if (i % 7 === 0) links.push(`<a rel="nofollow" href="/nofollow/${i}.html">nofollow</a>`);
    if (i % 11 === 0) links.push(`<a href="/private/${i}.html">private</a>`);
    if (i % 13 === 0) links.push('<a href="mailto:webmaster@example.invalid">mail</a>', '<a href="javascript:void(0)">js</a>');
    for (const other of this.spec.linksTo ?? []) {
      const o = this.web.site(other);
      links.push(`<a href="${o.pageUrl(i % o.spec.pages)}">elsewhere</a>`, `<a href="${o.url('/')}">elsewhere home</a>`);
    }
    if (i === 0 && this.spec.bad) for (const p of BAD_PATHS) links.push(`<a href="${p}">${p}</a>`);
    if (i === 0 && this.spec.archiveCases) for (const p of ARCHIVE_PATHS) links.push(`<a href="${p}">${p}</a>`);
    const head = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${name} page ${i} v${version}</title><style>p{margin:0}</style><script>var x = "${name}";</script></head><body><h1>${name} page ${i}</h1><p>version ${version} of page ${i} on ${name}</p><nav>${links.join(' ')}</nav><p>`;
    const tail = '</p></body></html>';
    const room = Math.max(0, this.pageBytes - head.length - tail.length);
    const f = filler();
    const start = (i * 7919 + version * 104_729) % (f.length - room - 1);
    return head + f.slice(start, start + room) + tail;
  }

  private sendHtml(req: IncomingMessage, res: ServerResponse, html: string, headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8' }): void {
    let body: Buffer = Buffer.from(html, 'utf8');
    if (this.spec.gzip && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      body = gzipSync(body, { level: 1 });
      headers['content-encoding'] = 'gzip';
    }
    headers['content-length'] = String(body.length);
    if (this.spec.recordBodies) this.sentBodies.set((req.url ?? '/').split('#')[0] as string, body);
    res.writeHead(200, headers);
    res.end(body);
  }

  /** Responses whose exact form an archive must keep. */
  private archiveCase(path: string, req: IncomingMessage, res: ServerResponse): void {
    const html = (s: string) => `<html><head><title>${path}</title></head><body>${s}</body></html>`;
    switch (path) {
      case '/warc/headers.html': {
        const body = Buffer.from(html('two cookies and a caf\u00e9'), 'utf8');
        if (this.spec.recordBodies) this.sentBodies.set(path, body);
        // A flat array keeps the order and the repeats; Node writes header values as latin1 (0xE9 for é).
        res.writeHead(200, 'Fine Thanks', [
          'Content-Type', 'text/html; charset=utf-8',
          'Set-Cookie', 'a=1; Path=/; HttpOnly',
          'X-Latin', 'caf\u00e9',
          'Set-Cookie', 'b=2; Path=/',
          'Content-Length', String(body.length),
        ]);
        return void res.end(body);
      }
      case '/warc/chunked.html': {
        // No Content-Length: Node sends it with Transfer-Encoding: chunked, in two chunks.
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.write('<html><head><title>chunked</title></head><body>first chunk, ');
        return void res.end('second chunk</body></html>');
      }
      case '/warc/moved':
        res.writeHead(301, { location: '/warc/headers.html', 'content-type': 'text/html' });
        return void res.end('<html><body>moved to <a href="/warc/headers.html">here</a></body></html>');
    }
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end(html('no such archive case'));
  }

  private bad(path: string, req: IncomingMessage, res: ServerResponse): void {
    const slow = this.spec.slowMs ?? 3000;
    const html = (s: string) => `<html><head><title>${path}</title></head><body>${s}</body></html>`;
    let m: RegExpExecArray | null;
    if ((m = /^\/bad\/redirect\/chain\/(\d+)$/.exec(path))) {
      const n = Number(m[1]);
      if (n === 0) return this.sendHtml(req, res, html('end of the chain'));
      res.writeHead(301, { location: `/bad/redirect/chain/${n - 1}` });
      res.end();
      return;
    }
    switch (path) {
      case '/bad/redirect/loop':
        res.writeHead(302, { location: '/bad/redirect/loop2' });
        return void res.end();
      case '/bad/redirect/loop2':
        res.writeHead(302, { location: '/bad/redirect/loop' });
        return void res.end();
      case '/bad/redirect/offsite': {
        const target = this.spec.linksTo?.[0] ? this.web.site(this.spec.linksTo[0]).url('/from-redirect') : 'http://offsite.example.invalid/from-redirect';
        res.writeHead(302, { location: target });
        return void res.end();
      }
      case '/bad/redirect/nolocation':
        res.writeHead(302);
        return void res.end();
      case '/bad/slow-headers':
        setTimeout(() => {
          if (!res.destroyed) this.sendHtml(req, res, html('slow headers'));
        }, slow);
        return;
      case '/bad/slow-body':
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': '100000' });
        res.write('<html><body>a slow start');
        return;
      case '/bad/broken':
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': '100000' });
        res.write('<html><body>broken');
        setTimeout(() => req.socket.destroy(), 20);
        return;
      case '/bad/huge':
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(50 * 1024 * 1024) });
        res.write('<html><body>');
        setTimeout(() => req.socket.destroy(), 1000);
        return;
      case '/bad/huge-chunked': {
        res.writeHead(200, { 'content-type': 'text/html' });
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        let sent = 0;
        const pump = () => {
          while (sent < 64 * 1024 * 1024 && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end();
        };
        pump();
        return;
      }
      case '/bad/bomb.html': {
        const b = bomb();
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': String(b.length) });
        return void res.end(b);
      }
      case '/bad/bad-encoding.html':
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'content-length': '20' });
        return void res.end(Buffer.from('this is not gzip....'));
      case '/bad/image.png':
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': '8' });
        return void res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      case '/bad/latin1.html': {
        const body = Buffer.from('<html><head><title>caf\u00e9</title></head><body>caf\u00e9 cr\u00e8me br\u00fbl\u00e9e <a href="/bad/500">x</a></body></html>', 'latin1');
        res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1', 'content-length': String(body.length) });
        return void res.end(body);
      }
      case '/bad/unknown-charset.html':
        res.writeHead(200, { 'content-type': 'text/html; charset=x-no-such-charset' });
        return void res.end('<html><body>unknown charset</body></html>');
      case '/bad/malformed.html':
        res.writeHead(200, { 'content-type': 'text/html' });
        return void res.end('<html><head><title>mal<formed</head><body><p><b><i>unclosed <a href="/bad/404">still a link<div></span></p></a><a href=/bad/500 >unquoted</a><<<>>><a href="');
      case '/bad/noindex.html':
        return this.sendHtml(req, res, '<html><head><meta name="robots" content="noindex, nofollow"><title>hidden</title></head><body>secret text <a href="/bad/never-followed">x</a></body></html>');
      case '/bad/huge-etag.html': {
        const body = Buffer.from(`<html><head><title>${'long title '.repeat(500)}</title></head><body>odd validators</body></html>`);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8; ' + 'x'.repeat(400), etag: `"${'e'.repeat(1000)}"`, 'last-modified': 'x'.repeat(300), 'content-length': String(body.length) });
        return void res.end(body);
      }
      case '/bad/404':
        res.writeHead(404, { 'content-type': 'text/html' });
        return void res.end(html('not found'));
      case '/bad/500':
        res.writeHead(500, { 'content-type': 'text/html' });
        return void res.end(html('server error'));
    }
    if (path.startsWith('/bad/trap/')) {
      // A spider trap: every page links one level deeper with a long segment.
      const seg = 'deeper-and-deeper-'.repeat(6);
      return this.sendHtml(req, res, html(`trap <a href="${path}${seg}/">deeper</a>`));
    }
    res.writeHead(404, { 'content-type': 'text/html' });
    res.end(html('no such bad path'));
  }
}

/** Paths linked from '/' on a site with `bad: true`. */
export const BAD_PATHS = [
  '/bad/redirect/chain/3',
  '/bad/redirect/chain/9',
  '/bad/redirect/loop',
  '/bad/redirect/offsite',
  '/bad/redirect/nolocation',
  '/bad/slow-headers',
  '/bad/slow-body',
  '/bad/broken',
  '/bad/huge',
  '/bad/huge-chunked',
  '/bad/bomb.html',
  '/bad/bad-encoding.html',
  '/bad/image.png',
  '/bad/latin1.html',
  '/bad/unknown-charset.html',
  '/bad/malformed.html',
  '/bad/noindex.html',
  '/bad/huge-etag.html',
  '/bad/404',
  '/bad/500',
  '/bad/trap/',
] as const;

/** Paths linked from '/' on a site with `archiveCases: true`. */
export const ARCHIVE_PATHS = ['/warc/moved', '/warc/headers.html', '/warc/chunked.html', '/warc/gone'] as const;

export function pagePath(i: number): string {
  return i === 0 ? '/' : `/p/${i}.html`;
}

export class TestWeb {
  readonly clock: TestClock;
  readonly epoch: number;
  readonly host: string;
  readonly bindHost = '127.0.0.1';
  private readonly sites = new Map<string, Site>();

  private constructor(opts: TestWebOptions) {
    this.clock = opts.clock ?? new TestClock(opts.epoch ?? Date.UTC(2026, 0, 1));
    this.epoch = opts.clock ? opts.clock.now() : (opts.epoch ?? Date.UTC(2026, 0, 1));
    this.host = opts.host ?? '127.0.0.1';
  }

  /** Starts one server per site on 127.0.0.1 (ephemeral ports). */
  static async start(specs: SiteSpec[], opts: TestWebOptions = {}): Promise<TestWeb> {
    const web = new TestWeb(opts);
    const seed = opts.seed ?? 1;
    for (const s of specs) {
      if (web.sites.has(s.name)) throw new Error(`duplicate site ${s.name}`);
      web.sites.set(s.name, new Site(s, web, seed));
    }
    await Promise.all([...web.sites.values()].map((s) => s.listen()));
    return web;
  }

  site(name: string): Site {
    const s = this.sites.get(name);
    if (!s) throw new Error(`no site ${name}`);
    return s;
  }

  get siteNames(): string[] {
    return [...this.sites.keys()];
  }

  async close(): Promise<void> {
    await Promise.all([...this.sites.values()].map((s) => s.close()));
  }
}
