// The owner's cap counts bytes as the operating system does: every request's
// reservation is settled with what its TCP connection moved (heads, bodies as
// sent — gzip included — robots.txt, redirects). Checked against the other
// end: the site's own sockets count exactly the same bytes, the other way round.
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTask, type TaskResult } from '../../src/crawler/task.js';
import { runTask, type FetchBudget } from '../../src/crawler/thread.js';
import { TestWeb } from '../../testbed/web/testweb.js';

let web: TestWeb;
beforeAll(async () => {
  web = await TestWeb.start([{ name: 'counted', pages: 12, fanout: 3, pageBytes: 3000, gzip: true }]);
});
afterAll(() => web.close());

describe('bytes as the OS counts them', () => {
  it("settles each request with its connection's socket bytes, equal to what the site's sockets moved", async () => {
    const site = web.site('counted');
    const server = { read: 0, written: 0, open: 0 };
    site.server.on('connection', (s: Socket) => {
      server.open++;
      s.once('close', () => {
        server.read += s.bytesRead;
        server.written += s.bytesWritten;
        server.open--;
      });
    });
    const settled = { down: 0, up: 0, requests: 0 };
    const budget: FetchBudget = {
      reserve: () => ({
        settle: (down, up = 0) => {
          settled.down += down;
          settled.up += up;
          settled.requests++;
        },
      }),
    };
    const results: TaskResult[] = [];
    const task = parseTask({ id: 'bytes', scope: { origin: site.origin, pathPrefixes: ['/'] }, seeds: [`${site.origin}/`], maxDepth: 5, delayMs: 0, deadline: Date.now() + 60_000 });
    const out = await runTask(task, { upload: async (r) => void results.push(r) }, { allowPrivate: true, budget });
    expect(out.status).toBe('completed');
    const t0 = Date.now();
    while (server.open > 0 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 20));
    expect(server.open).toBe(0);
    const final = results.find((r) => r.final)!;
    expect(settled.requests).toBe(final.stats.requests);
    expect(server.written).toBeGreaterThan(final.stats.bytes); // heads beside the bodies
    expect(settled).toEqual({ down: server.written, up: server.read, requests: final.stats.requests });
  });
});
