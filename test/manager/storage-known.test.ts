// The known pages a successful crawl leaves for the next task. The ingest service
// skips reading the channel's stored pages when a complete crawl arrives in one
// part; these cases check that the next task's known list is the same either way.
import { afterEach, describe, expect, it } from 'vitest';
import type { Manager } from '../../src/manager/manager.js';
import { MINUTE } from '../../src/manager/domain/scheduler.js';
import { Clock, openManager, resultFor, tempDir, upload, type FakePage } from './helpers.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ m: Manager; clock: Clock }> {
  const t = tempDir();
  const clock = new Clock();
  const m = await openManager(t.dir, clock);
  cleanups.push(async () => {
    await m.close();
    t.cleanup();
  });
  return { m, clock };
}

/** Issues the channel's next task and uploads `parts` for it (the last one final). */
async function crawl(s: { m: Manager; clock: Clock }, parts: FakePage[][], status: 'completed' | 'page-cap' = 'completed'): Promise<void> {
  s.clock.advance(300 * MINUTE);
  const [it] = await s.m.tasks.issueDue();
  s.clock.advance(1000);
  for (const [i, pages] of parts.entries()) {
    const final = i === parts.length - 1;
    expect(await s.m.ingest.ingest(upload(it!.task, resultFor(it!.task, pages, { part: i, final, status })), 'peer')).toBe('applied');
  }
}

async function nextKnown(s: { m: Manager; clock: Clock }): Promise<string[]> {
  s.clock.advance(300 * MINUTE);
  const [it] = await s.m.tasks.issueDue();
  return it!.task.known.map((k) => new URL(k.url).pathname).sort();
}

describe('known pages after a crawl', () => {
  it('a complete crawl in two parts: the pages of both parts', async () => {
    const s = await setup();
    await s.m.channels.add({ url: 'http://two.test/' });
    await crawl(s, [[{ path: '/', body: 'r' }, { path: '/a', body: 'a' }], [{ path: '/b', body: 'b' }]]);
    expect(await nextKnown(s)).toEqual(['/', '/a', '/b']);
  });

  it('a complete crawl in one part: only the pages it saw, not older stored ones', async () => {
    const s = await setup();
    await s.m.channels.add({ url: 'http://one.test/' });
    await crawl(s, [[{ path: '/', body: 'r' }, { path: '/gone', body: 'g' }]]);
    await s.m.tasks.failOverdue();
    await crawl(s, [[{ path: '/', body: 'r2' }, { path: '/new', body: 'n' }]]);
    expect(await nextKnown(s)).toEqual(['/', '/new']);
  });

  it('a partial crawl in one part: every stored page', async () => {
    const s = await setup();
    await s.m.channels.add({ url: 'http://cap.test/' });
    await crawl(s, [[{ path: '/', body: 'r' }, { path: '/old', body: 'o' }]]);
    await crawl(s, [[{ path: '/', body: 'r2' }]], 'page-cap');
    expect(await nextKnown(s)).toEqual(['/', '/old']);
  });
});
