import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { readFileSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { startApi, type ApiOptions, type ApiServer } from '../../src/manager/api/server.js';
import { apiBanner, resolveApiAuth, TOKEN_FILE, type ApiAuth } from '../../src/manager/api/auth.js';
import type { Manager } from '../../src/manager/manager.js';
import { Clock, openManager, resultFor, tempDir, upload } from './helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: Partial<ApiOptions> = {}): Promise<{ m: Manager; api: ApiServer }> {
  const t = tempDir();
  const m = await openManager(t.dir, new Clock());
  const api = await startApi({ manager: m }, { port: 0, ...opts });
  cleanups.push(async () => {
    await api.close();
    await m.close();
    t.cleanup();
  });
  return { m, api };
}

/** A request as the dashboard or curl sends it: state-changing ones declare JSON unless `headers` say otherwise. */
async function call(api: ApiServer, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const init: RequestInit = { method, headers: method === 'GET' ? { ...headers } : { 'content-type': 'application/json', ...headers } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
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

/** A request with exactly these headers (fetch would not let a test set Host), to 127.0.0.1. */
function raw(api: ApiServer, method: string, path: string, headers: Record<string, string>, body?: string) {
  const port = Number(new URL(api.url).port);
  return new Promise<{ status: number; headers: Record<string, unknown>; json: { error?: string } & Record<string, unknown> }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json: (res.headers['content-type']?.startsWith('application/json') ? JSON.parse(text) : {}) as { error?: string } });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const TOKEN = 'test-token-0123456789abcdef';

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
    const { api, m } = await setup();
    const imp = await call(api, 'POST', '/api/channels/import', '# list\nhttp://one.test/\nhttp://two.test/blog/post.html\nnot a url\n', { 'content-type': 'text/uri-list' });
    expect(imp.status).toBe(200);
    expect(imp.json.added).toBe(2);
    expect((imp.json.skipped as unknown[]).length).toBe(1);
    const q = await call(api, 'GET', '/api/tasks?state=queued');
    expect(q.json.queued).toBe(2);
    const issued = await m.tasks.issueDue();
    const t = issued[0]!;
    await m.ingest.ingest(upload(t.task, resultFor(t.task, [{ path: '/', body: 'front page' }], { interSite: ['http://three.test/x'] })), 'peer');
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

  it('refuses what a web page could send (wrong Host, other origin, simple content types) and changes nothing', async () => {
    const { api, m } = await setup();
    const kept = await call(api, 'POST', '/api/channels', { url: 'http://keep.test/' });
    const id = kept.json.id as string;
    const port = Number(new URL(api.url).port);
    const body = JSON.stringify({ url: 'http://csrf.test/' });
    const json = { 'content-type': 'application/json' };
    const cases: [string, string, Record<string, string>, string | undefined, number, RegExp][] = [
      // DNS rebinding: the attacker's name resolving to 127.0.0.1, reading or writing
      ['GET', '/api/channels', { host: `evil.example:${port}` }, undefined, 421, /Host "evil\.example:\d+" is not this server's address.*--allowed-host/],
      ['POST', '/api/channels', { host: `evil.example:${port}`, ...json }, body, 421, /DNS-rebinding/],
      ['GET', '/metrics', { host: `127.0.0.1:${port + 1}` }, undefined, 421, /not this server's address/],
      ['GET', '/api/status', { host: `127.0.0.1:${port}@evil.example` }, undefined, 421, /not this server's address/],
      // cross-origin writes: Origin of another site, of another local port, of a sandboxed frame; Sec-Fetch-Site
      ['POST', '/api/channels', { origin: 'http://evil.example', ...json }, body, 403, /cross-origin request refused \(Origin: http:\/\/evil\.example\)/],
      ['POST', '/api/channels', { origin: `http://localhost:${port + 1}`, ...json }, body, 403, /cross-origin/],
      ['DELETE', `/api/channels/${id}`, { origin: 'null', ...json }, undefined, 403, /cross-origin request refused \(Origin: null\)/],
      ['PATCH', `/api/channels/${id}`, { 'sec-fetch-site': 'cross-site', ...json }, '{"depth":1}', 403, /cross-site request refused \(Sec-Fetch-Site: cross-site\)/],
      ['POST', '/api/channels', { 'sec-fetch-site': 'same-site', ...json }, body, 403, /Sec-Fetch-Site: same-site/],
      // what a form or a preflight-free fetch can send
      ['POST', '/api/channels', { 'content-type': 'text/plain' }, body, 415, /POST needs Content-Type: application\/json \(got "text\/plain"\)/],
      ['POST', '/api/channels', { 'content-type': 'application/x-www-form-urlencoded' }, 'url=http://csrf.test/', 415, /application\/json/],
      ['POST', '/api/channels', { 'content-type': 'multipart/form-data; boundary=x' }, '--x--', 415, /application\/json/],
      ['POST', '/api/channels', {}, body, 415, /\(none sent\)/],
      ['DELETE', `/api/channels/${id}`, { 'content-type': 'text/plain' }, undefined, 415, /DELETE needs Content-Type: application\/json/],
      ['POST', '/api/channels/import', { 'content-type': 'text/plain' }, 'http://csrf.test/\n', 415, /application\/json or text\/uri-list/],
      ['POST', '/api/candidates/accept', { 'content-type': 'text/plain;charset=UTF-8' }, '{"origin":"http://csrf.test"}', 415, /application\/json/],
    ];
    for (const [method, path, headers, b, status, msg] of cases) {
      const r = await raw(api, method, path, headers, b);
      expect([method, path, headers, r.status]).toEqual([method, path, headers, status]);
      expect(r.json.error).toMatch(msg);
    }
    expect(m.sched.size).toBe(1);
    expect((await call(api, 'GET', '/api/channels')).json.channels).toEqual([kept.json]);

    // The server's own names, with its origin: accepted (what the dashboard sends).
    for (const host of [`localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) expect((await raw(api, 'GET', '/api/status', { host })).status).toBe(200);
    const own = await raw(api, 'POST', '/api/channels', { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json; charset=utf-8' }, body);
    expect(own.status).toBe(201);
    const seeds = await raw(api, 'POST', '/api/channels/import', { 'content-type': 'text/uri-list' }, '# seeds\nhttp://seed.test/\n');
    expect(seeds.json.added).toBe(1);
    expect((await raw(api, 'DELETE', `/api/channels/${id}`, {})).status).toBe(200); // a bodiless DELETE needs no Content-Type
  });

  it('with a token: every data request needs Authorization: Bearer, refusals change nothing', async () => {
    const { api, m } = await setup({ auth: { token: TOKEN, file: null } });
    expect(api.auth?.token).toBe(TOKEN);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const json = { 'content-type': 'application/json' };
    const body = JSON.stringify({ url: 'http://tok.test/' });
    for (const [method, path, headers, b] of [
      ['GET', '/api/status', {}, undefined],
      ['GET', '/metrics', {}, undefined],
      ['GET', '/api/nothing', {}, undefined],
      ['POST', '/api/channels', json, body],
    ] as const) {
      const r = await raw(api, method, path, headers, b);
      expect([path, r.status]).toEqual([path, 401]);
      expect(r.json.error).toMatch(/requires a token: send 'Authorization: Bearer <token>'/);
      expect(r.headers['www-authenticate']).toBe('Bearer realm="volcrawl manager"');
    }
    for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}`, TOKEN]) {
      const r = await raw(api, 'POST', '/api/channels', { ...json, authorization: wrong }, body);
      expect(r.status).toBe(401);
      expect(r.json.error).toBe('wrong API token');
      expect(r.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    }
    expect(m.sched.size).toBe(0);
    // The token does not lift the other checks.
    expect((await raw(api, 'POST', '/api/channels', { ...auth, 'content-type': 'text/plain' }, body)).status).toBe(415);
    expect((await raw(api, 'POST', '/api/channels', { ...auth, ...json, origin: 'http://evil.example' }, body)).status).toBe(403);
    expect(m.sched.size).toBe(0);
    expect((await raw(api, 'GET', '/api/status', auth)).status).toBe(200);
    expect((await raw(api, 'GET', '/metrics', { authorization: `bearer ${TOKEN}` })).status).toBe(200);
    expect((await raw(api, 'POST', '/api/channels', { ...auth, ...json }, body)).status).toBe(201);
    expect(m.sched.size).toBe(1);
  });

  it('will not listen beyond loopback without a token; bound to all addresses it answers IP literals and --allowed-host names', async () => {
    const t = tempDir();
    const m = await openManager(t.dir, new Clock());
    cleanups.push(async () => {
      await m.close();
      t.cleanup();
    });
    await expect(startApi({ manager: m }, { port: 0, host: '0.0.0.0' })).rejects.toThrow(/refusing to serve the operator API on 0\.0\.0\.0 without a token/);
    await expect(startApi({ manager: m }, { port: 0, allowedHosts: ['bad host:x'] })).rejects.toThrow(/--allowed-host "bad host:x"/);
    await expect(startApi({ manager: m }, { port: 0, allowedHosts: ['bad host'] })).rejects.toThrow(/--allowed-host "bad host"/);
    const api = await startApi({ manager: m }, { port: 0, host: '0.0.0.0', auth: { token: TOKEN, file: null }, allowedHosts: ['manager.example.org', 'alias.example:9'] });
    cleanups.push(() => api.close());
    const port = Number(new URL(api.url).port);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const status = async (host: string) => (await raw(api, 'GET', '/api/status', { ...auth, host })).status;
    expect(await status(`192.0.2.7:${port}`)).toBe(200);
    expect(await status(`[2001:db8::1]:${port}`)).toBe(200);
    expect(await status('manager.example.org')).toBe(200); // behind a reverse proxy: any port
    expect(await status('alias.example:9')).toBe(200);
    expect(await status(`alias.example:${port}`)).toBe(421);
    expect(await status(`192.0.2.7:${port + 1}`)).toBe(421);
    expect(await status(`evil.example:${port}`)).toBe(421);
    // A TLS reverse proxy: the page's origin is https, its authority the Host.
    const r = await raw(api, 'POST', '/api/channels', { ...auth, host: 'manager.example.org', origin: 'https://manager.example.org', 'content-type': 'application/json' }, '{"url":"http://proxied.test/"}');
    expect(r.status).toBe(201);
  });

  it('token: none on loopback unless asked; generated once into <data-dir>/api-token, mode 0600; or given', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    expect(await resolveApiAuth({ dataDir: t.dir, httpHost: '127.0.0.1' })).toBeNull();
    expect(await resolveApiAuth({ dataDir: t.dir, httpHost: 'localhost' })).toBeNull();
    const a = (await resolveApiAuth({ dataDir: t.dir, httpHost: '0.0.0.0' }))!;
    const file = join(t.dir, TOKEN_FILE);
    expect(a).toEqual({ token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) as unknown, file });
    expect(readFileSync(file, 'utf8')).toBe(`${a.token}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await resolveApiAuth({ dataDir: t.dir, httpHost: '::1', requireToken: true })).toEqual(a);
    chmodSync(file, 0o644);
    expect(await resolveApiAuth({ dataDir: t.dir, httpHost: '192.0.2.7' })).toEqual(a);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Given (--api-token / VOLCRAWL_API_TOKEN): required even on loopback, checked.
    expect(await resolveApiAuth({ dataDir: t.dir, httpHost: '127.0.0.1', apiToken: TOKEN })).toEqual({ token: TOKEN, file: null });
    await expect(resolveApiAuth({ dataDir: t.dir, httpHost: '127.0.0.1', apiToken: 'short' })).rejects.toThrow(/16 to 512 visible ASCII/);
    writeFileSync(file, 'has a space in it and more\n');
    await expect(resolveApiAuth({ dataDir: t.dir, httpHost: '0.0.0.0' })).rejects.toThrow(/api-token: expected .* delete the file/);
  });

  it('startup lines say how to authenticate', () => {
    const url = 'http://0.0.0.0:8787';
    expect(apiBanner(url, null)).toBe(`  operator API ${url} (try: curl ${url}/api/status)\n  dashboard ${url}/dashboard\n`);
    const fromFile: ApiAuth = { token: 'abc+/=defghijklmnop', file: "/data/it's/api-token" };
    const lines = apiBanner(url, fromFile);
    expect(lines).toContain(`curl -H "Authorization: Bearer $(cat '/data/it'\\''s/api-token')" ${url}/api/status`);
    expect(lines).toContain(`dashboard ${url}/dashboard#token=abc%2B%2F%3Ddefghijklmnop`);
    expect(apiBanner(url, { token: TOKEN, file: null })).toContain('Bearer $VOLCRAWL_API_TOKEN');
  });
});
