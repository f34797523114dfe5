// The owner's transfer cap inside the crawler: every request reserves room in
// the ledger first and settles what it moved, so a crawl against a real
// loopback site stops within one page of the cap, waits fetching nothing, and
// goes on when room is made (a raised cap) or ends when it is handed on.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskManager } from '../../src/crawler/manager.js';
import { parseTask, type Task, type TaskResult } from '../../src/crawler/task.js';
import { REQUEST_OVERHEAD_BYTES, runTask } from '../../src/crawler/thread.js';
import { Ledger, type PeriodConfig } from '../../src/node/ledger.js';
import { TestWeb } from '../../testbed/web/testweb.js';

let web: TestWeb;
let dir: string;
const MAX_BODY = 16 * 1024;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'volcrawl-budget-'));
  web = await TestWeb.start([
    { name: 'capped', pages: 40, fanout: 4, pageBytes: 5000, robots: 'none' },
    { name: 'raised', pages: 12, fanout: 4, pageBytes: 5000, robots: 'none' },
  ]);
});
afterAll(async () => {
  await web.close();
  rmSync(dir, { recursive: true, force: true });
});

const periods = (cap: number | null): PeriodConfig => ({ timeZone: 'UTC', dayStartsAt: 0, monthStartsOn: 1, dailyCapBytes: cap, monthlyCapBytes: null });
const used = (l: Ledger) => {
  const t = l.usage().today;
  return t.down + t.up;
};
function task(id: string, origin: string): Task {
  return parseTask({ id, scope: { origin, pathPrefixes: ['/'] }, seeds: [`${origin}/`], maxDepth: 10, maxPages: 100, delayMs: 0, deadline: Date.now() + 120_000 });
}
const sink = (into: TaskResult[]) => ({ upload: async (r: TaskResult) => void into.push(r) });

function until(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const check = () => (cond() ? resolve() : Date.now() - t0 > ms ? reject(new Error(`timed out waiting for ${what}`)) : setTimeout(check, 20));
    check();
  });
}

describe('the transfer cap in the crawler thread', () => {
  it('stops fetching within one page of the cap, fetches nothing while waiting, and ends as handed on when aborted', async () => {
    const cap = 40_000;
    const ledger = new Ledger({ path: join(dir, 'capped.json'), periods: periods(cap), autoFlushMs: 0 });
    const site = web.site('capped');
    const abort = new AbortController();
    let spentAt: number | null = null;
    const results: TaskResult[] = [];
    const run = runTask(task('capped', site.origin), sink(results), {
      allowPrivate: true,
      limits: { maxBodyBytes: MAX_BODY },
      budget: ledger,
      signal: abort.signal,
      onBudgetSpent: () => (spentAt ??= site.stats.requests),
    });
    await until(() => spentAt !== null, 'the budget to run out');
    // Ask for room again (the thread retries every second) and check that nothing more was fetched.
    const reserveCalls = { n: 0 };
    const orig = ledger.reserve.bind(ledger);
    ledger.reserve = (b: number) => (reserveCalls.n++, orig(b));
    await until(() => reserveCalls.n >= 2, 'the thread to ask again');
    expect(site.stats.requests).toBe(spentAt);
    abort.abort();
    const out = await run;
    expect(out.status).toBe('aborted'); // handed on: nothing uploaded
    expect(results).toEqual([]);
    // Counted: the bodies the site sent, plus the heads; over the cap by less than one reservation.
    expect(used(ledger)).toBeGreaterThanOrEqual(cap);
    expect(used(ledger) - cap).toBeLessThanOrEqual(MAX_BODY + REQUEST_OVERHEAD_BYTES);
    expect(used(ledger)).toBeGreaterThanOrEqual(out.stats.bytes);
    expect(site.stats.requests).toBeLessThan(40); // it did stop short of the site
    expect(ledger.reservedBytes).toBe(0);
  });

  it('goes on when the owner raises the cap', async () => {
    const ledger = new Ledger({ path: join(dir, 'raised.json'), periods: periods(15_000), autoFlushMs: 0 });
    const site = web.site('raised');
    let spent = false;
    const results: TaskResult[] = [];
    const run = runTask(task('raised', site.origin), sink(results), { allowPrivate: true, limits: { maxBodyBytes: MAX_BODY }, budget: ledger, onBudgetSpent: () => (spent = true) });
    await until(() => spent, 'the budget to run out');
    ledger.setPeriods(periods(null));
    const out = await run;
    expect(out.status).toBe('completed');
    expect(out.stats.pagesFetched).toBeGreaterThanOrEqual(12); // every page of the site (and its extras)
    expect(results.at(-1)?.final).toBe(true);
  });
});

describe('TaskManager under the owner', () => {
  it('pause hands back queued tasks and takes none until resume; threads and queue follow the owner', async () => {
    const results: TaskResult[] = [];
    const tm = new TaskManager({ threads: 1, queue: 1, allowPrivate: true, lowPriority: false, sink: sink(results), thread: { limits: { maxBodyBytes: MAX_BODY } } });
    const origin = web.site('capped').origin;
    const slow = (id: string) => parseTask({ ...task(id, origin), delayMs: 60_000 });
    expect(tm.submit(slow('a'))).toBe('accepted');
    expect(tm.submit(slow('b'))).toBe('accepted');
    expect(tm.submit(slow('c'))).toBe('full');
    tm.setQueue(3);
    expect(tm.submit(slow('c'))).toBe('accepted');
    expect(tm.load()).toEqual({ running: 1, queued: 2, free: 1, threads: 1 });
    tm.setThreads(3); // the queued ones start at once
    expect(tm.load()).toEqual({ running: 3, queued: 0, free: 3, threads: 3 });
    const handed = await tm.pause();
    expect(handed.map((t) => t.id).sort()).toEqual(['a', 'b', 'c']);
    expect(tm.submit(slow('d'))).toBe('full');
    expect(tm.load().free).toBe(0);
    tm.resume();
    expect(tm.submit(slow('d'))).toBe('accepted');
    await tm.close();
    expect(results).toEqual([]); // handed on, never uploaded
  });
});
