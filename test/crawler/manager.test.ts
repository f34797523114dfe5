import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskManager } from '../../src/crawler/manager.js';
import { TaskValidationError, type Task } from '../../src/crawler/task.js';
import { TestWeb } from '../../testbed/web/testweb.js';
import { CollectSink, siteTask } from './helpers.js';

let web: TestWeb;
beforeAll(async () => {
  web = await TestWeb.start([
    { name: 's1', pages: 12 },
    { name: 's2', pages: 12 },
    { name: 's3', pages: 12 },
    { name: 's4', pages: 12 },
    { name: 's5', pages: 12 },
    { name: 's6', pages: 12 },
  ]);
});
afterAll(async () => {
  await web.close();
});

describe('TaskManager', () => {
  it('never runs more than N threads nor queues more than the limit, and finishes every accepted task', async () => {
    const sink = new CollectSink();
    const m = new TaskManager({ threads: 2, queue: 3, allowPrivate: true, sink, lowPriority: false });
    const results: ('accepted' | 'full')[] = [];
    const tasks: Task[] = [];
    for (let i = 0; i < 8; i++) {
      const t = siteTask(web.site(`s${(i % 6) + 1}`), { delayMs: 20 });
      tasks.push(t);
      results.push(m.submit(t));
      const l = m.load();
      expect(l.running).toBeLessThanOrEqual(2);
      expect(l.queued).toBeLessThanOrEqual(3);
    }
    expect(results).toEqual(['accepted', 'accepted', 'accepted', 'accepted', 'accepted', 'full', 'full', 'full']);
    expect(m.load()).toEqual({ running: 2, queued: 3, free: 0, threads: 2 });
    await m.idle();
    expect(m.peak.running).toBe(2);
    expect(m.peak.queued).toBe(3);
    const finals = sink.parts.filter((p) => p.final);
    expect(finals.map((f) => f.taskId).sort()).toEqual(tasks.slice(0, 5).map((t) => t.id).sort());
    expect(finals.every((f) => f.status === 'completed')).toBe(true);
    expect(m.load()).toEqual({ running: 0, queued: 0, free: 5, threads: 2 });
    await m.close();
  });

  it('cancels and reports a task that waits past its deadline', async () => {
    const sink = new CollectSink();
    const ended: string[] = [];
    const m = new TaskManager({ threads: 1, queue: 5, allowPrivate: true, sink, lowPriority: false, sweepMs: 50, onTaskEnd: (t, o) => ended.push(`${t.id}:${o.status}`) });
    const before = web.site('s2').stats.requests;
    const slow = siteTask(web.site('s1'), { delayMs: 100 }); // ~1.3 s
    const overdue = siteTask(web.site('s2'), { deadline: Date.now() + 200 });
    m.submit(slow);
    m.submit(overdue);
    await m.idle();
    const f = sink.final(overdue.id);
    expect(f.status).toBe('cancelled');
    expect(f.reason).toMatch(/deadline/);
    expect(f.pages).toEqual([]);
    expect(ended).toContain(`${overdue.id}:cancelled`);
    expect(web.site('s2').stats.requests).toBe(before);
    expect(sink.final(slow.id).status).toBe('completed');
    await m.close();
  });

  it('hands queued and running tasks over on drain, without uploading them', async () => {
    const sink = new CollectSink();
    const m = new TaskManager({ threads: 2, queue: 2, allowPrivate: true, sink, lowPriority: false });
    const tasks = [1, 2, 3, 4].map((i) => siteTask(web.site(`s${i}`), { delayMs: 200 }));
    for (const t of tasks) expect(m.submit(t)).toBe('accepted');
    await new Promise((r) => setTimeout(r, 300));
    const handed = await m.drain();
    expect(handed.map((t) => t.id).sort()).toEqual(tasks.map((t) => t.id).sort());
    expect(sink.parts).toEqual([]);
    expect(m.submit(siteTask(web.site('s5')))).toBe('full');
    expect(m.load().free).toBe(0);
    await m.close();
  });

  it('rejects an invalid task with a reason instead of running it', () => {
    const m = new TaskManager({ sink: new CollectSink(), lowPriority: false });
    const t = siteTask(web.site('s1'));
    expect(() => m.submit({ ...t, filters: ['(a+)+$'] })).toThrow(TaskValidationError);
    expect(() => m.submit({ ...t, seeds: ['file:///etc/passwd'] })).toThrow(/scheme/);
    expect(m.load().running).toBe(0);
    void m.close();
  });

  it('shares one bandwidth cap across threads', async () => {
    const sink = new CollectSink();
    const m = new TaskManager({ threads: 3, queue: 0, allowPrivate: true, sink, lowPriority: false, maxBandwidth: 20_000 });
    for (const i of [1, 2, 3]) m.submit(siteTask(web.site(`s${i}`)));
    const t0 = performance.now();
    await m.idle();
    const secs = (performance.now() - t0) / 1000;
    const bytes = sink.parts.filter((p) => p.final).reduce((a, p) => a + p.stats.bytes, 0);
    // ~75 KB in all: the bucket (20 KB/s, 20 KB burst) holds the three threads together to its rate.
    expect(bytes).toBeGreaterThan(60_000);
    expect(bytes).toBeLessThanOrEqual(20_000 + 20_000 * secs + 3 * 4096);
    await m.close();
  });
});
