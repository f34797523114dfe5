// The operator dashboard served by the manager: headers (CSP), static files,
// the time series and server-rendered SVG charts over HTTP; then the page in a
// real headless Chromium (playwright-core, Debian's /usr/bin/chromium): add a
// channel through the UI, see it listed, see the charts render, no script
// errors or CSP violations, and markup in a channel's note shown as text.
// Then a manager that requires its API token: the page gets it from the
// printed link's #token= or from the token form, and works as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { BrowserContext, Page } from 'playwright-core';
import { startManager, type RunningManager, type ServeFlags } from '../../src/manager/serve.js';
import { TOKEN_FILE } from '../../src/manager/api/auth.js';
import { TestWeb } from '../../testbed/web/testweb.js';

const CHROMIUM = '/usr/bin/chromium';
let dir: string;
let mgr: RunningManager;
let web: TestWeb;

const flags = (dataDir: string): ServeFlags => ({ dataDir, listen: ['/ip4/127.0.0.1/tcp/0'], httpPort: 0, httpHost: '127.0.0.1', strategy: 'iir', lan: true, warc: false, sync: false, tick: 500, routeConcurrency: 2, logLevel: 'silent', dashboardSampleMs: 200 });

/** Runs `fn` in headless Chromium with a fresh profile (playwright passes it as --user-data-dir). */
async function withBrowser(fn: (browser: BrowserContext) => Promise<void>): Promise<void> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'volcrawl-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 1600 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    await fn(browser);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

/** Polls `expr` in the page until true: waitForFunction's polling evaluates strings with eval, which the CSP forbids. */
async function until(page: Page, expr: string, timeoutMs = 30_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; !(await page.evaluate(expr)); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${expr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// (page functions as strings: this file is type-checked without the DOM lib)
const CHARTS_LOADED = "['quality', 'intervals', 'throughput', 'tasks'].every((n) => { const img = document.getElementById('chart-' + n); return img !== null && img.complete && img.naturalWidth > 100; })";

describe('dashboard', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'volcrawl-dash-'));
    web = await TestWeb.start([{ name: 'shop', pages: 4, changesPerDay: 1 }], { seed: 2 });
    mgr = await startManager(flags(dir), pino({ level: 'silent' }));
  }, 60_000);

  afterAll(async () => {
    await mgr?.stop();
    await web?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('serves the page with a strict CSP, the series and SVG charts', async () => {
    const base = mgr.api.url;
    const root = await fetch(`${base}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/dashboard');
    const page = await fetch(`${base}/dashboard`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).not.toMatch(/<script>|\son[a-z]+=|\sstyle=/i); // no inline script, handlers or styles
    for (const f of ['app.js', 'style.css']) expect((await fetch(`${base}/dashboard/${f}`)).status).toBe(200);
    expect((await fetch(`${base}/dashboard/../package.json`)).status).toBe(404);
    expect((await fetch(`${base}/dashboard/nope.js`)).status).toBe(404);
    const series = (await (await fetch(`${base}/dashboard/series`)).json()) as { samples: { groups: unknown[] }[] };
    expect(series.samples.length).toBeGreaterThan(0);
    expect(series.samples[0]!.groups.length).toBe(5);
    for (const c of ['quality', 'intervals', 'throughput', 'tasks']) {
      const r = await fetch(`${base}/dashboard/chart/${c}.svg`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      expect(await r.text()).toMatch(/^<svg/);
    }
    expect((await fetch(`${base}/dashboard/chart/evil.svg`)).status).toBe(404);
    // The JSON API is unchanged.
    expect((await fetch(`${base}/api/status`)).status).toBe(200);
  }, 60_000);

  it.skipIf(!existsSync(CHROMIUM))('works in headless Chromium: add a channel, list it, charts render', async () => {
    await withBrowser(async (browser) => {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
      });
      page.on('response', (res) => {
        const u = new URL(res.url());
        const expected = (res.status() === 400 && u.pathname === '/api/channels') || u.pathname === '/favicon.ico';
        if (res.status() >= 400 && !expected) problems.push(`HTTP ${res.status()} ${res.request().method()} ${u.pathname}`);
      });
      // A channel whose note is markup: it must show as text.
      const evil = '<img src=x id=pwned>';
      const r = await fetch(`${mgr.api.url}/api/channels`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: 'http://127.0.0.1:9/evil/', note: evil }) });
      expect(r.status).toBe(201);

      await page.goto(`${mgr.api.url}/dashboard`);
      await until(page, "document.getElementById('c-channels')?.textContent === '1'");

      const url = web.site('shop').url('/');
      await page.fill('#add-url', url);
      await page.fill('#add-depth', '2');
      await page.fill('#add-group', '1');
      await page.click('#add-button');
      await page.waitForSelector('#add-msg.ok', { timeout: 30_000 });
      const row = page.locator('#channels tbody tr', { hasText: web.site('shop').origin });
      await row.waitFor({ timeout: 30_000 });
      expect(await row.locator('td').nth(2).textContent()).toBe('1');
      expect((await mgr.manager.channels.list()).map((c) => c.origin)).toContain(web.site('shop').origin);

      // A bad URL: the API's error shows, nothing added.
      await page.fill('#add-url', 'ftp://example.org/');
      await page.click('#add-button');
      await page.waitForSelector('#add-msg.error', { timeout: 30_000 });
      expect(mgr.manager.sched.size).toBe(2);

      // The note is text, not an element.
      await page.locator('#channels tbody tr', { hasText: '127.0.0.1:9' }).waitFor();
      expect(await page.locator('#pwned').count()).toBe(0);
      expect(await page.locator('#channels').textContent()).toContain(evil);

      // A crawler the manager knows: its load reads as words, not JSON.
      mgr.node.peers.note('12D3KooWcrawlerForTheDashboard', { crawler: true, load: { running: 1, queued: 1, free: 4 }, rttMs: 12 });
      const crawlerRow = page.locator('#crawlers tbody tr', { hasText: '12D3KooWcrawlerForTheDashboard' });
      await crawlerRow.waitFor({ timeout: 30_000 });
      expect(await crawlerRow.locator('td').nth(2).textContent()).toBe('2 of 6 slots busy (1 running, 1 queued)');
      // Its owner paused it: the row says so, and why.
      // It reported being reachable over relays with some peers hole-punched (behind NAT): the reachability column says so.
      mgr.node.ownerStates.note('12D3KooWcrawlerForTheDashboard', { state: 'paused', reasons: ['cap', 'schedule'], since: Date.now(), reach: 'punched' });
      await until(page, "[...document.querySelectorAll('#crawlers tbody td')].some((td) => td.textContent === 'paused (cap, schedule)')");
      expect(await crawlerRow.locator('td').nth(6).textContent()).toBe('relayed, hole-punched');
      const api = (await (await fetch(`${mgr.api.url}/api/crawlers`)).json()) as { crawlers: { id: string; reachability: string | null }[] };
      expect(api.crawlers.find((c) => c.id === '12D3KooWcrawlerForTheDashboard')?.reachability).toBe('punched');
      expect(await (await fetch(`${mgr.api.url}/metrics`)).text()).toMatch(/^volcrawl_volunteers_reachability\{reach="punched"\} 1$/m);

      // Charts: the <img>s load an SVG with real size.
      await until(page, CHARTS_LOADED);
      // Edit: pin the channel into group 0.
      await row.getByRole('button', { name: 'Edit' }).click();
      await page.fill('#edit-group', '0');
      await page.check('#edit-pinned');
      await page.click('#edit-form button[type=submit]');
      await page.waitForSelector('#edit-msg.ok', { timeout: 30_000 });
      const ch = (await mgr.manager.channels.list()).find((c) => c.origin === web.site('shop').origin)!;
      expect(ch.group).toBe(0);
      expect(ch.pinnedGroup).toBe(true);

      if (process.env.VOLCRAWL_SCREENSHOT) await page.screenshot({ path: process.env.VOLCRAWL_SCREENSHOT, fullPage: true });
      expect(problems).toEqual([]);
    });
  }, 120_000);

  it('with a required token: data needs it, the page takes it from #token= or the form', async () => {
    const tdir = mkdtempSync(join(tmpdir(), 'volcrawl-dash-token-'));
    const tmgr = await startManager({ ...flags(tdir), requireToken: true }, pino({ level: 'silent' }));
    try {
      const base = tmgr.api.url;
      const token = readFileSync(join(tdir, TOKEN_FILE), 'utf8').trim();
      expect(tmgr.api.auth).toEqual({ token, file: join(tdir, TOKEN_FILE) });
      // The page and its script load without the token; nothing with data does.
      for (const p of ['/dashboard', '/dashboard/app.js', '/dashboard/style.css']) expect((await fetch(base + p)).status).toBe(200);
      for (const p of ['/api/status', '/api/channels', '/metrics', '/dashboard/series', '/dashboard/chart/quality.svg']) {
        expect([p, (await fetch(base + p)).status]).toEqual([p, 401]);
        expect([p, (await fetch(base + p, { headers: { authorization: `Bearer ${token}` } })).status]).toEqual([p, 200]);
      }
      if (!existsSync(CHROMIUM)) return;
      await withBrowser(async (browser) => {
        // The printed link: the token arrives in the fragment and leaves the address bar.
        const page = await browser.newPage();
        const problems: string[] = [];
        page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
        page.on('console', (m) => {
          if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) problems.push(`console: ${m.text()} ${m.location().url}`);
        });
        page.on('response', (res) => {
          if (res.status() >= 400 && new URL(res.url()).pathname !== '/favicon.ico') problems.push(`HTTP ${res.status()} ${res.request().method()} ${new URL(res.url()).pathname}`);
        });
        await page.goto(`${base}/dashboard#token=${encodeURIComponent(token)}`);
        await until(page, "document.getElementById('c-channels')?.textContent === '0'");
        expect(new URL(page.url()).hash).toBe('');
        await until(page, CHARTS_LOADED);
        // Import (a text/uri-list seed list) and Remove (DELETE) through the page.
        await page.click('details summary');
        await page.fill('#import-text', '# seeds\nhttp://seed-a.test/\nhttp://seed-b.test/news/\n');
        await page.click('#import-button');
        await page.waitForSelector('#import-msg.ok', { timeout: 30_000 });
        expect(await page.textContent('#import-msg')).toBe('added 2');
        page.once('dialog', (d) => void d.accept());
        await page.locator('#channels tbody tr', { hasText: 'seed-a.test' }).getByRole('button', { name: 'Remove' }).click();
        await page.waitForSelector('#add-msg.ok', { timeout: 30_000 });
        expect((await tmgr.manager.channels.list()).map((c) => c.origin)).toEqual(['http://seed-b.test']);
        expect(await page.locator('#token-form').isHidden()).toBe(true);
        expect(problems).toEqual([]);

        // Another tab (its own sessionStorage) without the link: the token form asks for it.
        const other = await browser.newPage();
        await other.goto(`${base}/dashboard`);
        await other.waitForSelector('#token-form:not([hidden])', { timeout: 30_000 });
        expect(await other.textContent('#token-msg')).toMatch(/needs its API token/);
        await other.fill('#token-input', 'not-the-token-at-all');
        await other.click('#token-button');
        await until(other, "document.getElementById('token-msg')?.textContent?.includes('refused this token') && !document.getElementById('token-form').hidden");
        await other.fill('#token-input', token);
        await other.click('#token-button');
        await until(other, "document.getElementById('c-channels')?.textContent === '1'");
        await other.locator('#channels tbody tr', { hasText: 'seed-b.test' }).waitFor({ timeout: 30_000 });
        expect(await other.locator('#token-form').isHidden()).toBe(true);
      });
    } finally {
      await tmgr.stop();
      rmSync(tdir, { recursive: true, force: true });
    }
  }, 120_000);
});
