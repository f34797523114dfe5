import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { startApi, type ApiServer } from '../../src/manager/http.js';
import type { Manager } from '../../src/manager/manager.js';
import { Storage } from '../../src/manager/storage.js';
import { Clock, openManager, resultFor, tempDir, upload } from './helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ m: Manager; api: ApiServer; storage: Storage }> {
  const t = tempDir();
  const m = await openManager(t.dir, new Clock());
  const storage = new Storage(m);
  const api = await startApi({ manager: m, storage }, { port: 0 });
  cleanups.push(async () => {
    await api.close();
    await m.close();
    t.cleanup();
  });
  return { m, api, storage };
}

async function call(api: ApiServer, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    if (typeof body !== 'string') (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const res = await fetch(api.url + path, init);
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* text */
  }
  return { status: res.status, json: json as Record<string, unknown> & { error?: string }, text };
}

describe('operator HTTP API', () => {
  it('binds to 127.0.0.1 and does channel CRUD', async () => {
    const { api } = await setup();
    expect(api.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const a = await call(api, 'POST', '/api/channels', { url: 'http://a.test/news/', depth: 2 });
    expect(a.status).toBe(201);
    expect(a.json).toMatchObject({ kind: 'directory', pathPrefixes: ['/news/'], depth: 2 });
    const id = a.json.id as string;
    const got = await call(api, 'GET', `/api/channels/${id}`);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ id, schedule: { inFlight: null } });
    const patched = await call(api, 'PATCH', `/api/channels/${id}`, { depth: 4, filters: ['^http://a\\.test/news/[0-9]+$'] });
    expect(patched.status).toBe(200);
    expect(patched.json.depth).toBe(4);
    const list = await call(api, 'GET', '/api/channels?limit=10');
    expect((list.json.channels as unknown[]).length).toBe(1);
    expect((await call(api, 'DELETE', `/api/channels/${id}`)).status).toBe(200);
    expect((await call(api, 'GET', `/api/channels/${id}`)).status).toBe(404);
  });

  it('bad input: 4xx with a clear message and nothing changed', async () => {
    const { api, m } = await setup();
    const ok = await call(api, 'POST', '/api/channels', { url: 'http://keep.test/' });
    const id = ok.json.id as string;
    const cases: [string, string, unknown, number, RegExp][] = [
      ['POST', '/api/channels', '{"url": "http://x.test/",', 400, /malformed JSON/],
      ['POST', '/api/channels', { url: 'file:///etc/passwd' }, 400, /scheme file: not allowed/],
      ['POST', '/api/channels', { url: 'http://x.test/', filters: ['(a|a)*$'] }, 400, /backtracking/],
      ['POST', '/api/channels', { url: 'http://x.test/', depth: 'deep' }, 400, /depth/],
      ['POST', '/api/channels', { url: 'http://x.test/', unknown: true }, 400, /unrecognized|unknown/i],
      ['POST', '/api/channels', [1, 2], 400, /expected object|body/],
      ['POST', '/api/channels', { url: 'http://keep.test/' }, 409, /already exists/],
      ['PATCH', `/api/channels/${id}`, { filters: ['(x+x+)+y'] }, 400, /backtracking/],
      ['PATCH', '/api/channels/nope', { depth: 1 }, 404, /no channel nope/],
      ['GET', '/api/channels/nope/content', undefined, 404, /no channel/],
      ['DELETE', '/api/channels/nope', undefined, 404, /no channel/],
      ['GET', '/api/tasks?state=weird', undefined, 400, /state must be/],
      ['GET', '/api/channels?limit=0', undefined, 400, /limit/],
      ['POST', '/api/candidates/accept', { origin: 'http://none.test' }, 404, /no candidate/],
      ['POST', '/api/candidates/reject', {}, 400, /origin/],
      ['PUT', '/api/groups', {}, 405, /not allowed/],
      ['GET', '/api/nothing', undefined, 404, /no route/],
    ];
    for (const [method, path, body, status, msg] of cases) {
      const r = await call(api, method, path, body);
      expect([method, path, r.status]).toEqual([method, path, status]);
      expect(r.json.error).toMatch(msg);
    }
    expect(m.sched.size).toBe(1);
    expect((await call(api, 'GET', `/api/channels/${id}`)).json.filters).toEqual([]);
  });

  it('oversized bodies get 413 and change nothing', async () => {
    const { api, m } = await setup();
    const big = JSON.stringify({ url: 'http://big.test/', note: 'x'.repeat(2 * 1024 * 1024) });
    const r = await call(api, 'POST', '/api/channels', big, { 'content-type': 'application/json' });
    expect(r.status).toBe(413);
    expect(r.json.error).toMatch(/larger than 1048576/);
    // chunked, without a content-length
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(api.url + '/api/channels', { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      for (let i = 0; i < 20; i++) req.write('x'.repeat(100_000));
      req.end();
    });
    expect(status).toBe(413);
    expect(m.sched.size).toBe(0);
  });

  it('imports a seed list, reports tasks, groups, content, candidates and metrics', async () => {
    const { api, m, storage } = await setup();
    const imp = await call(api, 'POST', '/api/channels/import', '# list\nhttp://one.test/\nhttp://two.test/blog/post.html\nnot a url\n', { 'content-type': 'text/plain' });
    expect(imp.status).toBe(200);
    expect(imp.json.added).toBe(2);
    expect((imp.json.skipped as unknown[]).length).toBe(1);
    const q = await call(api, 'GET', '/api/tasks?state=queued');
    expect(q.json.queued).toBe(2);
    const issued = await m.issueDue();
    const t = issued[0]!;
    await storage.ingest(upload(t.task, resultFor(t.task, [{ path: '/', body: 'front page' }], { interSite: ['http://three.test/x'] })), 'peer');
    const content = await call(api, 'GET', `/api/channels/${t.channel.id}/content`);
    expect((content.json.pages as { text: string }[]).map((p) => p.text)).toEqual(['front page']);
    const running = await call(api, 'GET', '/api/tasks?state=issued');
    expect((running.json.tasks as unknown[]).length).toBe(1);
    const groups = await call(api, 'GET', '/api/groups');
    expect(groups.json.strategy).toBe('iir');
    expect((groups.json.groups as unknown[]).length).toBe(5);
    const cands = await call(api, 'GET', '/api/candidates?status=pending');
    expect((cands.json.candidates as { origin: string }[]).map((c) => c.origin)).toEqual(['http://three.test']);
    const acc = await call(api, 'POST', '/api/candidates/accept', { origin: 'http://three.test', depth: 1 });
    expect(acc.status).toBe(201);
    expect(acc.json.depth).toBe(1);
    expect((await call(api, 'POST', '/api/candidates/accept', { origin: 'http://three.test' })).status).toBe(409);
    const metrics = await fetch(api.url + '/metrics').then((r) => r.text());
    expect(metrics).toContain('volcrawl_channels 3');
    expect(metrics).toContain('volcrawl_pages_stored_total 1');
    expect(metrics).toMatch(/volcrawl_group_interval_seconds\{group="0"\} 3600/);
    expect((await call(api, 'GET', '/api/crawlers')).json.online).toBe(0);
  });
});
