// The local test web: a real HTTP server per generated site on 127.0.0.1
// (one port per site, so each site is its own origin). Sites have a link
// structure of chosen size and depth, robots.txt variants, ETag and
// Last-Modified validators, pages that change on a seeded Poisson schedule
// driven by a clock you advance, and (on request) every bad response a
// crawler meets: redirects and loops, slow/broken/oversized bodies, a gzip
// bomb, non-HTML, odd charsets, malformed HTML and spider traps. The ground
// truth (when each page changed) is queryable to measure freshness.
//
// This file is the servers: one Site per generated site (its pages, robots.txt,
// conditional GET) and the TestWeb that starts them. Beside it: site-spec.ts
// (what a web is made of), change-schedule.ts (the virtual clock and when each
// page changed), bad-responses.ts (the /bad/ and /warc/ cases).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createRng, randomInt } from '../../src/rng.js';
import { ARCHIVE_PATHS, BAD_PATHS, serveArchiveCase, serveBad, type CaseSite } from './bad-responses.js';
import { ChangeSchedule, TestClock } from './change-schedule.js';
import type { SiteSpec, TestWebOptions } from './site-spec.js';

export { ARCHIVE_PATHS, BAD_PATHS } from './bad-responses.js';
export { TestClock } from './change-schedule.js';
export type { RobotsSpec, SiteSpec, TestWebOptions } from './site-spec.js';

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

export class Site implements CaseSite {
  readonly stats: SiteStats = { requests: 0, notModified: 0, robotsRequests: 0, paths: [], maxConnections: 0, openConnections: 0, connections: 0, userAgents: new Set() };
  server!: Server;
  port = 0;
  private readonly fanout: number;
  private readonly pageBytes: number;
  private readonly schedule: ChangeSchedule;
  private readonly sockets = new Set<Socket>();
  /** The last body sent per path (with `recordBodies`), content-encoded as sent. */
  readonly sentBodies = new Map<string, Buffer>();

  constructor(
    readonly spec: SiteSpec,
    private readonly web: TestWeb,
    seed: number,
  ) {
    this.fanout = spec.fanout ?? 5;
    this.pageBytes = spec.pageBytes ?? 2000;
    this.schedule = new ChangeSchedule(spec.changesPerDay ?? 0, spec.name, seed, web.epoch);
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
    return this.schedule.changeTimes(i, t);
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
    if (this.spec.bad && path.startsWith('/bad/')) return serveBad(this, path, req, res);
    if (this.spec.archiveCases && path.startsWith('/warc/')) return serveArchiveCase(this, path, req, res);
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

  /** Sends a 200 HTML page: gzipped when the spec and the client allow, recorded with `recordBodies`. */
  sendHtml(req: IncomingMessage, res: ServerResponse, html: string, headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8' }): void {
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

  /** The URL of `path` on another site of this web. */
  siteUrl(name: string, path: string): string {
    return this.web.site(name).url(path);
  }
}

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
