import { afterEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { Manager } from '../../src/manager/manager.js';
import { statsOf, exactValue } from '../../src/recrawl/window-stats.js';
import { channelOfTask } from '../../src/manager/domain/task-builder.js';
import { tempDir } from './helpers.js';

const root = resolve(import.meta.dirname, '../..');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Runs a child fixture and hands each line it prints to `onLine`; when that returns true
 * the child is killed with SIGKILL. Every line it printed before it died is still handed
 * on (each was printed after its write was acknowledged); resolves once it is gone. */
async function runUntilKilled(fixture: string, dir: string, onLine: (line: string) => boolean): Promise<void> {
  const child = spawn(process.execPath, ['bin/run-ts.js', fixture, dir], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let killed = false;
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop()!;
    for (const l of lines) {
      if (onLine(l) && !killed) {
        killed = true;
        child.kill('SIGKILL');
      }
    }
  });
  const code = await new Promise<number | null>((r) => child.once('close', r));
  if (!killed) throw new Error(`child exited ${code}`);
}

describe('durability', () => {
  it('kill -9 after acknowledgements loses no channel, task or stored page', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const acked: string[] = [];
    await runUntilKilled('test/manager/fixtures/crash-child.ts', t.dir, (l) => {
      if (l === 'ready') return true;
      acked.push(l);
      return false;
    });
    const m = await Manager.open({ dataDir: t.dir, clock: () => Date.UTC(2026, 0, 1) });
    cleanups.push(() => m.close());
    const channelIds = acked.filter((l) => l.startsWith('acked channel ')).map((l) => l.slice('acked channel '.length));
    expect(channelIds.length).toBe(20);
    for (const id of channelIds) expect((await m.channels.get(id)).id).toBe(id);
    expect(m.sched.size).toBe(20);
    const tasks = acked.find((l) => l.startsWith('acked tasks '))!.slice('acked tasks '.length).split(',');
    const uploaded = acked.find((l) => l.startsWith('acked upload '))!.slice('acked upload '.length);
    for (const id of tasks) expect(m.tasks.isActive(id)).toBe(id !== uploaded);
    const ch = uploaded.split('.')[0]!;
    const pages = await m.pages.latest(ch);
    expect(pages.map((p) => p.text)).toEqual(['stored before the crash']);
    expect((await m.channels.history(ch)).length).toBe(1);
  });

  it('kill -9 during scheduling windows loses no due channel and duplicates no task in flight', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const acked = new Set<string>();
    let windows = 0;
    let clock = 0;
    await runUntilKilled('test/manager/fixtures/window-child.ts', t.dir, (l) => {
      const [kind, a, b] = l.split(' ');
      if (kind === 'acked') {
        clock = Number(a);
        for (const id of (b ?? '').split(',').filter(Boolean)) acked.add(id);
        // Windows run back to back: the kill lands inside one (or inside a refusal).
        return ++windows === 60;
      }
      if (kind === 'failed') acked.delete(a!);
      return false;
    });
    // A day later every channel without a task in flight is due.
    let now = clock + 24 * 3600_000;
    const m = await Manager.open({ dataDir: t.dir, clock: () => now });
    cleanups.push(() => m.close());
    const all = (await m.channels.list({ limit: 10_000 })).map((c) => c.id);
    expect(all.length).toBe(3000);
    const active = await m.tasks.activeList(100_000);
    // Nothing acknowledged is lost: every task acknowledged and not refused is still in flight.
    for (const id of acked) expect(m.tasks.isActive(id), id).toBe(true);
    // No duplicate: one task per channel, one per host, the in-flight set as the records say.
    const flying = active.map((x) => x.channel);
    expect(new Set(flying).size).toBe(flying.length);
    expect(m.inflight.size).toBe(flying.length);
    expect(new Set(active.map((x) => x.host)).size).toBe(active.length);
    // No due channel lost: every other channel is due (in the index or parked behind a busy host), none twice.
    const due = await m.reporting.listDue(10_000);
    expect(new Set(due).size).toBe(due.length);
    expect([...due, ...flying].sort()).toEqual([...all].sort());
    // The window aggregates written with each batch equal the ones from the records.
    const views = await Promise.all(all.map(async (id) => {
      const { inFlight: _f, dueAt: _d, intervalMs: _i, ...v } = await m.channels.recrawlState(id);
      return v;
    }));
    const plain = (s: ReturnType<typeof statsOf>) => s.map(({ hSum, ...g }) => ({ ...g, hSum: exactValue(hSum) }));
    expect(plain(m.sched.stats)).toEqual(plain(statsOf(views, 5, m.sched.state.options.triggerUpdates)));
    // Scheduling goes on: refusing every task and issuing again reaches every channel, never
    // one already in flight and never two on one host.
    const reached = new Set(flying);
    for (let round = 0; round < 40 && reached.size < all.length; round++) {
      for (const x of await m.tasks.activeList(100_000)) await m.tasks.onDispatched(x.id, { status: 'rejected', reason: 'test' });
      now += 10 * 60_000;
      const before = new Set((await m.tasks.activeList(100_000)).map((x) => x.channel));
      const issued = await m.tasks.issueDue(10_000);
      for (const x of issued) {
        expect(before.has(x.channel.id)).toBe(false);
        reached.add(channelOfTask(x.task.id));
      }
      expect(new Set(issued.map((x) => x.channel.host)).size).toBe(issued.length);
    }
    expect(reached.size).toBe(all.length);
  }, 120_000);

  it('CLI verbs refuse a database held by the server, pointing to the HTTP API', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const m = await Manager.open({ dataDir: t.dir });
    cleanups.push(() => m.close());
    const r = spawnSync(process.execPath, ['bin/dht-manager.js', 'channels', 'add', 'http://x.test/', '--data-dir', t.dir], { cwd: root, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/locked by another process/);
    expect(r.stderr).toMatch(/curl -X POST .*\/api\/channels/);
  });
});
