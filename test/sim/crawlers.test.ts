// The crawlers' queues in the paper's `hold` reading: tasks held beyond a full
// queue expire by deadline (found through a heap, not a scan) but are cancelled
// in the order they were held, and refill the queue oldest first.
import { describe, expect, it } from 'vitest';
import { Crawlers } from '../../sim/crawlers.js';
import { ST_QUEUED, TaskPool } from '../../sim/task-pool.js';

function setup(threads = 1, queue = 1) {
  const pool = new TaskPool(64);
  const started: number[] = [];
  const cancelled: number[] = [];
  const crawlers = new Crawlers(2, threads, queue, pool, {
    start: (s) => started.push(s),
    cancel: (s, deadline) => {
      cancelled.push(s);
      expect(deadline).toBe(pool.deadline[s]);
      pool.release(s);
    },
  });
  crawlers.join(0);
  crawlers.join(1);
  return { pool, crawlers, started, cancelled };
}

describe('held tasks (the paper reading of a full system)', () => {
  it('expire in hold order, whatever their deadlines, and refill the queue oldest first', () => {
    const { pool, crawlers, started, cancelled } = setup();
    const run = pool.alloc(0, 1000);
    crawlers.hold(run, 0, 0); // takes the thread
    const queued = pool.alloc(1, 1000);
    crawlers.hold(queued, 0, 0); // takes the queue slot
    // Held beyond the queue: deadlines out of hold order.
    const deadlines = [50, 10, 40, 20, 500, 30];
    const held = deadlines.map((d, i) => {
      const s = pool.alloc(2 + i, d);
      crawlers.hold(s, 0, 0);
      return s;
    });
    expect(crawlers.heldCount).toBe(6);
    expect(held.every((s) => pool.state[s] === ST_QUEUED && pool.crawler[s] === 0)).toBe(true);
    // At 35 the tasks due by 10, 20 and 30 expire: cancelled in the order they were held.
    crawlers.purge(0, 35);
    expect(cancelled).toEqual([held[1], held[3], held[5]]);
    expect(crawlers.heldCount).toBe(3);
    // A purge before the next deadline (40) cancels nothing more.
    crawlers.purge(0, 39);
    expect(cancelled).toHaveLength(3);
    // The running task finishes: the queued one starts, the oldest held (deadline 50) moves up.
    crawlers.finish(run, 0, 36);
    expect(started).toEqual([run, queued]);
    expect(crawlers.heldCount).toBe(2);
    crawlers.finish(queued, 0, 37);
    expect(started.at(-1)).toBe(held[0]);
    // At 45 the one due by 40 (now at the head of the queue) expires; 500 is left held.
    crawlers.purge(0, 45);
    expect(cancelled.at(-1)).toBe(held[2]);
    expect(crawlers.load(45)).toEqual({ running: 1, queued: 1 });
    expect(crawlers.heldCount).toBe(0);
  });

  it('a departing crawler hands back its running, queued and held tasks, expired ones cancelled', () => {
    const { pool, crawlers, cancelled } = setup();
    const tasks = [100, 100, 5, 100, 7, 100].map((d, i) => pool.alloc(i, d));
    for (const s of tasks) crawlers.hold(s, 1, 0);
    const out: number[] = [];
    crawlers.leave(1, 8, out);
    expect(cancelled).toEqual([tasks[2], tasks[4]]);
    expect(out).toEqual([tasks[0], tasks[1], tasks[3], tasks[5]]);
    expect(crawlers.heldCount).toBe(0);
    expect(crawlers.load(8)).toEqual({ running: 0, queued: 0 });
  });
});
