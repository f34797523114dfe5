// The responses a crawler must survive (/bad/...: redirect chains and loops,
// slow, broken and oversized bodies, a gzip bomb, non-HTML, odd charsets,
// malformed HTML, oversized validators, a spider trap) and the ones an archive
// must keep exactly (/warc/...: repeated and Latin-1 headers with an odd reason
// phrase, a chunked body, a redirect). Apart from the site's normal pages so
// that each case reads on its own; a site with `bad` or `archiveCases` serves them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { SiteSpec } from './site-spec.js';

/** What a case needs of the site that serves it. */
export interface CaseSite {
  readonly spec: SiteSpec;
  /** The last body sent per path (with `recordBodies`). */
  readonly sentBodies: Map<string, Buffer>;
  /** Sends a 200 HTML page the way the site sends its pages (gzip, recorded body). */
  sendHtml(req: IncomingMessage, res: ServerResponse, html: string): void;
  /** The URL of `path` on another site of the web, by name. */
  siteUrl(name: string, path: string): string;
}

let bombCache: Buffer | null = null;
/** 32 MiB of spaces gzipped to ~32 KiB (built on first use). */
function bomb(): Buffer {
  bombCache ??= gzipSync(Buffer.alloc(32 * 1024 * 1024, 0x20), { level: 9 });
  return bombCache;
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

/** Responses whose exact form an archive must keep. */
export function serveArchiveCase(site: CaseSite, path: string, req: IncomingMessage, res: ServerResponse): void {
  const html = (s: string) => `<html><head><title>${path}</title></head><body>${s}</body></html>`;
  switch (path) {
    case '/warc/headers.html': {
      const body = Buffer.from(html('two cookies and a caf\u00e9'), 'utf8');
      if (site.spec.recordBodies) site.sentBodies.set(path, body);
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

/** The bad responses, by path. */
export function serveBad(site: CaseSite, path: string, req: IncomingMessage, res: ServerResponse): void {
  const slow = site.spec.slowMs ?? 3000;
  const html = (s: string) => `<html><head><title>${path}</title></head><body>${s}</body></html>`;
  let m: RegExpExecArray | null;
  if ((m = /^\/bad\/redirect\/chain\/(\d+)$/.exec(path))) {
    const n = Number(m[1]);
    if (n === 0) return site.sendHtml(req, res, html('end of the chain'));
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
      const target = site.spec.linksTo?.[0] ? site.siteUrl(site.spec.linksTo[0], '/from-redirect') : 'http://offsite.example.invalid/from-redirect';
      res.writeHead(302, { location: target });
      return void res.end();
    }
    case '/bad/redirect/nolocation':
      res.writeHead(302);
      return void res.end();
    case '/bad/slow-headers':
      setTimeout(() => {
        if (!res.destroyed) site.sendHtml(req, res, html('slow headers'));
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
      return site.sendHtml(req, res, '<html><head><meta name="robots" content="noindex, nofollow"><title>hidden</title></head><body>secret text <a href="/bad/never-followed">x</a></body></html>');
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
    return site.sendHtml(req, res, html(`trap <a href="${path}${seg}/">deeper</a>`));
  }
  res.writeHead(404, { 'content-type': 'text/html' });
  res.end(html('no such bad path'));
}
