// The owner's controls as the network sees them, with real processes: a
// `dht-manager serve --contact-url` and two `volunteer-crawler join` on the
// local test web. `pause` from a second process → the manager shows the
// volunteer paused with reason "owner" (API and /metrics) and the next task
// for a host goes to the other one; every request carries the operator's
// contact URL, which reached the volunteers in the manager's signed
// configuration; a host on one owner's block list is refused with the
// reason, then never sent to that node again (the manager excludes it for
// that host: no order reaches it even to be passed on) and crawled by the other — and
// the test web, which attributes every connection to the process that opened
// it (/proc), never saw that owner's computer fetch it.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackFetches, type Fetch } from '../../testbed/fetch-owner.js';
import { waitFor } from '../../testbed/net/harness.js';
import { startManagerProcess, startVolunteerProcess, type ManagerProcess, type VolunteerProcess } from '../../testbed/processes.js';
import { TestWeb } from '../../testbed/web/testweb.js';

const BIN = resolve(import.meta.dirname, '../../bin/volunteer-crawler.js');
const CONTACT = 'https://crawl-operator.example/about-our-crawler';
const BLOCKED = '127.0.1.21';

let dir: string;
let web: TestWeb;
let mgr: ManagerProcess;
let a: VolunteerProcess;
let b: VolunteerProcess;
let fetches: Fetch[];
/** b's log lines from its start on. */
const bLog: string[] = [];
const dataDir = (name: string) => join(dir, name);

interface CrawlerView {
  id: string;
  owner: { state: string; reasons: string[] } | null;
}
interface ChannelView {
  history: { taskId: string; crawler?: string; status: string }[];
}
async function api<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(`${mgr.api}${path}`, init);
  return (await res.json()) as T;
}
const crawler = async (id: string) => (await api<{ crawlers: CrawlerView[] }>('/api/crawlers')).crawlers.find((c) => c.id === id);
const history = async (id: string) => (await api<ChannelView>(`/api/channels/${id}`)).history;
async function addChannel(site: string): Promise<string> {
  const body = JSON.stringify({ url: web.site(site).url('/'), depth: 2, delayMs: 0, group: 0 });
  return (await api<{ id: string }>('/api/channels', { method: 'POST', headers: { 'content-type': 'application/json' }, body })).id;
}
/** `volunteer-crawler <verb> --data-dir <dir>` as the owner types it, from a second process. */
function owner(verb: string, data: string): Promise<string> {
  return new Promise((done, fail) => execFile(process.execPath, [BIN, verb, '--data-dir', data], (err, stdout, stderr) => (err ? fail(new Error(stderr || String(err))) : done(stdout))));
}
async function withLogs<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const logs = [mgr, a, b].filter((p) => p !== undefined).map((p) => p.output(40)).join('\n');
    throw new Error(`${(err as Error).message}\n${logs}`, { cause: err });
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-owner-net-'));
  web = await TestWeb.start([
    { name: 'open', bindHost: '127.0.1.20', pages: 6, fanout: 3 },
    { name: 'blocked', bindHost: BLOCKED, pages: 6, fanout: 3 },
  ]);
  mgr = await startManagerProcess(dataDir('manager'), ['--contact-url', CONTACT, '--time-scale', '60', '--tick', '200', '--rate-cap', '1000', '--no-spot-checks', '--log-level', 'info']);
  for (const name of ['a', 'b']) mkdirSync(dataDir(name), { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir('b'), 'volunteer.toml'), `[never_fetch]\naddress_ranges = ["${BLOCKED}"]\n`);
  const args = ['--threads', '2', '--queue', '2', '--coord-interval', '1000'];
  a = await startVolunteerProcess('a', mgr, dataDir('a'), [...args, '--seed', '1']);
  b = await startVolunteerProcess('b', mgr, dataDir('b'), [...args, '--seed', '2']);
  b.follow((l) => bLog.push(l));
  fetches = trackFetches(web, () => [a.proc.pid!, b.proc.pid!]);
  await withLogs(() => waitFor(async () => (await api<{ online: number }>('/api/crawlers')).online >= 2, 90_000, 'the manager to see both volunteers'));
}, 200_000);

afterAll(async () => {
  await Promise.all([a, b].filter((p) => p !== undefined).map((p) => p.kill()));
  await mgr?.stop(10_000);
  await web?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the owner's controls seen by the network (real processes)", () => {
  it('pause from a second process: the manager shows it paused by its owner and routes the next task elsewhere; requests name the operator from the signed configuration', async () => {
    await withLogs(async () => {
      await waitFor(async () => (await crawler(a.peerId))?.owner?.state === 'running', 60_000, 'a to report itself running');
      await owner('pause', dataDir('a'));
      await waitFor(async () => {
        const c = await crawler(a.peerId);
        return c?.owner?.state === 'paused' && c.owner.reasons.join() === 'owner';
      }, 60_000, 'the manager to show a paused by its owner');
      const metrics = await (await fetch(`${mgr.api.replace(/\/$/, '')}/metrics`)).text();
      expect(metrics).toMatch(/volcrawl_volunteers_paused\{reason="owner"\} 1/);
      expect(metrics).toMatch(/volcrawl_volunteers_owner_state\{state="paused"\} 1/);

      const id = await addChannel('open');
      await waitFor(async () => (await history(id)).some((h) => h.status === 'completed'), 90_000, 'the open site to be crawled');
      const done = (await history(id)).filter((h) => h.status === 'completed');
      expect(done.every((h) => h.crawler === b.peerId)).toBe(true);
      const open = fetches.filter((f) => f.site === 'open');
      expect(open.length).toBeGreaterThan(0);
      expect(open.filter((f) => f.pid === a.proc.pid)).toEqual([]); // the paused computer fetched nothing
      // The operator's contact URL reached the volunteer in the manager's signed configuration.
      expect(open.every((f) => f.userAgent.includes(`+${CONTACT}`) && f.userAgent.startsWith('volcrawl/'))).toBe(true);
    });
  }, 240_000);

  it('a host on the block list: refused with the reason, then never routed to that node again and crawled by the other; never fetched from the blocking computer', async () => {
    await withLogs(async () => {
      // a is still paused: the first task for the blocked host can only go to b, which refuses it.
      const id = await addChannel('blocked');
      await waitFor(async () => {
        const failed = await api<{ tasks?: { channel: string; reason?: string }[] }>('/api/tasks?state=failed&limit=100');
        return (failed.tasks ?? []).some((t) => t.channel === id && /never_fetch/.test(t.reason ?? ''));
      }, 90_000, 'the refusal, with its reason, at the manager');
      const refusedAt = bLog.length;
      await owner('resume', dataDir('a'));
      await waitFor(async () => (await history(id)).some((h) => h.status === 'completed' && h.crawler === a.peerId), 120_000, 'the blocked host to be crawled by a');
      // b accepted the host's task once (the refusal); an order for it that reached b since was passed on, not taken.
      const bAccepted = bLog.filter((l) => l.includes('"task accepted"') && l.includes(`"host":"${BLOCKED}"`));
      expect(bAccepted).toHaveLength(1);
      // The manager remembered (host, b) from the refusal: no order for the host reached b since, not even to be passed on.
      expect(bLog.slice(refusedAt).filter((l) => l.includes('passed on to another crawler') && l.includes(`"host":"${BLOCKED}"`))).toEqual([]);
      const blocked = fetches.filter((f) => f.site === 'blocked');
      expect(blocked.some((f) => f.pid === a.proc.pid)).toBe(true);
      expect(blocked.filter((f) => f.pid !== a.proc.pid)).toEqual([]); // b's computer never fetched it
    });
  }, 240_000);
});
