// The downloader against a raw TCP server, for responses the test web does not
// send: informational (1xx) heads, and a server that never answers.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Downloader } from '../../src/crawler/downloader.js';
import { DEFAULT_LIMITS, USER_AGENT } from '../../src/crawler/limits.js';

let server: Server;
let origin: string;
let connections = 0;

const html = '<html><body>early hints</body></html>';
const responses: Record<string, string> = {
  '/hints':
    'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n' +
    `HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: ${html.length}\r\n\r\n${html}`,
  '/not-modified': 'HTTP/1.1 304 Not Modified\r\nETag: "x"\r\n\r\n',
};

beforeAll(async () => {
  server = createServer((sock: Socket) => {
    connections++;
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const path = buf.slice(4, buf.indexOf(' ', 4));
        buf = buf.slice(end + 4);
        const r = responses[path];
        if (r) sock.write(r); // anything else: never answered
      }
    });
    sock.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address() as { port: number };
  origin = `http://127.0.0.1:${addr.port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const downloader = (signal?: AbortSignal) => new Downloader(origin, { allowPrivate: true, userAgent: USER_AGENT, limits: DEFAULT_LIMITS, ...(signal ? { signal } : {}) });

describe('downloader', () => {
  it('skips a 1xx head and returns the real response', async () => {
    const dl = downloader();
    const r = await dl.get(new URL('/hints', origin));
    await dl.close();
    expect(r.ok && r.status).toBe(200);
    expect(r.ok && r.body?.toString()).toBe(html);
  });

  it('keeps the connection across bodiless responses', async () => {
    const before = connections;
    const dl = downloader();
    for (let i = 0; i < 3; i++) {
      const r = await dl.get(new URL('/not-modified', origin), { headers: ['if-none-match', '"x"'] });
      expect(r.ok && r.status).toBe(304);
      expect(r.ok && r.body).toBeNull();
    }
    await dl.close();
    expect(connections - before).toBe(1);
    expect(dl.requests).toBe(3);
  });

  it('ends a request in flight when its task is stopped', async () => {
    const stop = new AbortController();
    const dl = downloader(stop.signal);
    const pending = dl.get(new URL('/silent', origin));
    setTimeout(() => stop.abort(), 50);
    const t0 = performance.now();
    const r = await pending;
    await dl.close();
    expect(r.ok).toBe(false);
    expect(performance.now() - t0).toBeLessThan(5000); // not the 15 s headers timeout
    expect(await dl.get(new URL('/hints', origin))).toMatchObject({ ok: false });
  });
});
