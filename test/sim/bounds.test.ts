// Where the online thread-minutes went (sim/thread-use.ts): the ledger on
// hand-computed cases, and in real runs the five parts add up to the online
// thread-minutes the bound counts, each integrated or summed on its own.
import { describe, expect, it } from 'vitest';
import { runScenario } from '../../sim/run.js';
import { ThreadLedger, threadUse, threadUseShares } from '../../sim/thread-use.js';

describe('thread ledger', () => {
  it('integrates idle threads, and those idle while tasks waited, between events', () => {
    const l = new ThreadLedger();
    // t 0–4: 10 threads online, 3 running, 5 live tasks (2 waiting): idle 7, of which 2 had work waiting.
    for (let i = 0; i < 3; i++) l.start();
    l.advance(0, 10, 5);
    l.advance(4, 10, 5);
    expect(l.idleMinutes).toBe(28);
    expect(l.idleWaitingMinutes).toBe(8);
    // t 4–6: one task ends, 5 threads online (a crawler left), 2 running, 9 live (7 waiting):
    // idle 3, all 3 with work waiting elsewhere.
    l.stop();
    l.advance(6, 5, 9);
    expect(l.idleMinutes).toBe(34);
    expect(l.idleWaitingMinutes).toBe(14);
    // t 6–7: every thread busy: nothing idle.
    for (let i = 0; i < 3; i++) l.start();
    l.advance(7, 5, 12);
    expect(l.idleMinutes).toBe(34);
    expect(l.idleWaitingMinutes).toBe(14);
  });

  it('shares sum to one', () => {
    const u = threadUse({ completedMinutes: 50, lostMinutes: 10, inProgressMinutes: 5, idleMinutes: 35, idleWaitingMinutes: 15 });
    expect(u).toEqual({ completed: 50, lost: 10, inProgress: 5, idleWaiting: 15, idleNothing: 20 });
    const s = threadUseShares(u, 100);
    expect(s.completed + s.lost + s.inProgress + s.idleWaiting + s.idleNothing).toBeCloseTo(1, 12);
  });
});

describe('the breakdown of a run', () => {
  for (const scenario of ['rec', 'ruc'] as const) {
    it(`${scenario}: completed + lost + in progress + idle = the online thread-minutes`, () => {
      const r = runScenario({ scenario, strategies: ['fixed', 'caf'], routing: 'coord', seed: 1, quick: true, steps: 1500 });
      for (const s of Object.values(r.strategies)) {
        const c = s!.capacity;
        const u = threadUse(c);
        // Busy time is summed per task, idle time integrated between events: two ways, one total.
        expect(u.completed + u.lost + u.inProgress).toBeCloseTo(c.busyMinutes, 6);
        expect((u.completed + u.lost + u.inProgress + u.idleWaiting + u.idleNothing) / c.threadMinutes).toBeCloseTo(1, 9);
        for (const v of Object.values(u)) expect(v).toBeGreaterThanOrEqual(0);
        expect(u.completed).toBeGreaterThan(0);
        expect(u.lost).toBeGreaterThan(0); // crawlers leave without notice
        expect(u.inProgress).toBeGreaterThan(0);
      }
      // The JSON's shares say the same.
      const caf = r.strategies.caf!;
      const shares = threadUseShares(threadUse(caf.capacity), caf.capacity.threadMinutes);
      expect(shares.completed).toBeCloseTo(caf.capacity.completedMinutes / caf.capacity.threadMinutes, 12);
    });
  }
});

describe("CAF's waiting tasks (cafWaitIntervals)", () => {
  it('a due channel whose task still waits is not submitted again; every task still ends exactly once', () => {
    const run = (cafWaitIntervals: number) =>
      runScenario({ scenario: 'rec', strategies: ['caf'], routing: 'coord', seed: 1, quick: true, steps: 3000, recrawl: { cafWaitIntervals } }).strategies.caf!;
    const one = run(1);
    const two = run(2);
    for (const s of [one, two]) {
      const o = s.outcomes;
      expect(o.completed + o.failed + o.cancelled + o.lost + o.pendingAtEnd).toBe(s.tasksTotal);
      const u = threadUse(s.capacity);
      expect((u.completed + u.lost + u.inProgress + u.idleWaiting + u.idleNothing) / s.capacity.threadMinutes).toBeCloseTo(1, 9);
    }
    // Seeded: with one interval of waiting some tasks expired, and waiting two expires fewer for fewer tasks.
    expect(one.outcomes.cancelled).toBeGreaterThan(0);
    expect(two.outcomes.cancelled).toBeLessThan(one.outcomes.cancelled);
    expect(two.tasksTotal).toBeLessThan(one.tasksTotal);
  });
});
