// The disk-backed scheduler (due index, window aggregates, channels read on demand)
// against the in-memory reference model (reference-scheduler.ts: every channel's
// state resident, aggregates summed from scratch at each round) on the same seeded
// workload: channels added with and without a binding rate cap, many sharing a
// host; time steps; tasks issued, completed through real uploads (the estimator
// moves channels and changes their intervals), refused, overdue; operator moves
// and interval changes; deletions and additions; rounds. After every step the issue
// order, every round's report and every group statistic must be identical — bit for
// bit, floats included — and at the end every channel's record and due time.
import { afterEach, describe, expect, it } from 'vitest';
import type { RecrawlOptions, StrategyName, SystemLoad } from '../../src/recrawl/index.js';
import { exactValue, type GroupStats } from '../../src/recrawl/window-stats.js';
import type { Manager } from '../../src/manager/manager.js';
import { MINUTE } from '../../src/manager/domain/scheduler.js';
import { createRng, randomInt, uniform, type Rng } from '../../src/rng.js';
import { Clock, openManager, resultFor, tempDir, upload } from './helpers.js';
import { ReferenceScheduler } from './reference-scheduler.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const plain = (s: GroupStats[]) => s.map(({ hSum, ...g }) => ({ ...g, hSum: exactValue(hSum) }));
const INTERVALS = [60, 120, 240, 480, 960];

interface Flying {
  channel: string;
  task: import('../../src/crawler/task.js').Task;
}

async function run(
  strategy: StrategyName,
  seed: number,
  steps: number,
  more: Partial<RecrawlOptions> = {},
  /** The crawlers' load at a step (CAF steers on it; the manager is told through its loadSource). */
  loadAt: (step: number) => SystemLoad | null = () => null,
): Promise<{ issued: number; rounds: number; moves: number; parked: number; groupEncouraged: number; budgets: [number, number, boolean][] }> {
  const rng: Rng = createRng(seed);
  const t = tempDir();
  cleanups.push(t.cleanup);
  const clock = new Clock();
  const recrawl = { strategy, triggerUpdates: 2, triggerFraction: 0.5, rateCap: 2, maxRoundGap: 24 * 60, ...more };
  const m: Manager = await openManager(t.dir, clock, { recrawl, retryDelayMs: 5 * MINUTE });
  cleanups.push(() => m.close());
  const ref = new ReferenceScheduler({ recrawl, retryDelayMs: 5 * MINUTE }, clock.t);
  const flying: Flying[] = [];
  let nextHost = 0;
  let issuedTotal = 0;
  let parked = 0;

  const addChannels = async (n: number) => {
    const raws = Array.from({ length: n }, () => {
      // about half the channels share a host with another (sub-directories of one site)
      const h = rng.next() < 0.5 && nextHost > 0 ? randomInt(rng, nextHost) : nextHost++;
      const group = randomInt(rng, 5);
      const raw: Record<string, unknown> = { origin: `http://h${h}.test`, pathPrefixes: [`/d${randomInt(rng, 1e6)}/`], group };
      // some change slowly for their group: the rate cap (2) holds them back beyond its interval
      if (rng.next() < 0.3) raw.changeInterval = INTERVALS[group]! * uniform(rng, 0.5, 8);
      return raw;
    });
    for (const r of await m.channels.addMany(raws)) {
      if (r instanceof Error) continue; // a duplicate prefix
      ref.add(r.id, r.group, r.changeInterval, undefined, r.host);
    }
  };

  const compare = async (at: string) => {
    expect(plain(m.sched.stats), at).toEqual(plain(ref.groupStats()));
    const a = m.sched.state;
    const b = ref.state;
    expect({ groups: a.groups, rounds: a.rounds, windowStart: a.windowStart, top: a.topCount, trig: a.triggerCount, theta: a.theta, lsr: a.lastSystemSuccessRate }, at).toEqual({
      groups: b.groups,
      rounds: b.rounds,
      windowStart: b.windowStart,
      top: b.topCount,
      trig: b.triggerCount,
      theta: b.theta,
      lsr: b.lastSystemSuccessRate,
    });
  };

  // Every channel: its record as src/recrawl sees it, its task in flight, due time and interval.
  const compareChannels = async (at: string) => {
    for (const id of ref.channelIds()) {
      const { inFlight, dueAt, intervalMs, ...view } = await m.channels.recrawlState(id);
      const due = ref.dueAt(id);
      expect({ view, inFlight, dueAt, intervalMs }, `${id} ${at}`).toEqual({ view: ref.channel(id), inFlight: ref.inFlight(id), dueAt: Number.isFinite(due) ? due : null, intervalMs: ref.intervalMs(id) });
    }
  };

  await addChannels(120);
  let rounds = 0;
  const budgets: [number, number, boolean][] = [];
  let load: SystemLoad | null = null;
  m.tasks.loadSource = () => load;
  let groupEncouraged = 0;
  let moves = 0;
  for (let step = 0; step < steps; step++) {
    clock.advance(Math.round(uniform(rng, 0.5, 40) * MINUTE));
    const now = clock.t;
    // overdue tasks fail (the manager in its own order: the outcome does not depend on it)
    await m.tasks.failOverdue();
    for (const [ch, task] of ref.overdue(now, m.tasks.graceMs)) ref.markFailure(ch, task, now);
    for (let i = flying.length - 1; i >= 0; i--) if (!m.tasks.isActive(flying[i]!.task.id)) flying.splice(i, 1);
    // rounds
    load = loadAt(step);
    const r1 = await m.tasks.maybeReassign();
    const r2 = ref.maybeReassign(now, load);
    expect(r1, `round at step ${step}`).toEqual(r2);
    if (r1 !== null) rounds++;
    if (r1?.strategy === 'caf' && r1.observedLoad !== undefined) budgets.push([step, r1.observedLoad, r1.encouraged[0]!]);
    // rounds where some groups were encouraged and others not (only the per-group step does that)
    if (r1 !== null && r1.encouraged.some((e) => e) && !r1.encouraged.every((e) => e)) groupEncouraged++;
    // a scheduling window
    const limit = 1 + randomInt(rng, 12);
    const issued = await m.tasks.issueDue(limit);
    expect(
      issued.map((x) => x.channel.id),
      `issue order at step ${step}`,
    ).toEqual(ref.due(now, limit));
    for (const x of issued) {
      ref.markIssued(x.channel.id, x.task.id, now, x.task.deadline);
      flying.push({ channel: x.channel.id, task: x.task });
    }
    issuedTotal += issued.length;
    let nowParked = 0;
    await m.repos.due.eachParked(() => void nowParked++);
    parked = Math.max(parked, nowParked);
    // outcomes of some tasks in flight
    for (let i = flying.length - 1; i >= 0; i--) {
      const f = flying[i]!;
      const r = rng.next();
      if (r < 0.35) {
        // a successful crawl: its pages change at random, so the estimator moves channels
        const pages = Array.from({ length: 1 + randomInt(rng, 3) }, (_, k) => ({ path: `${f.task.scope.pathPrefixes[0]}p${k}`, body: rng.next() < 0.6 ? `v${step}` : 'same' }));
        const res = resultFor(f.task, pages, { at: now });
        res.stats.downloadMs = Math.round(uniform(rng, 100, 120_000));
        await m.ingest.ingest(upload(f.task, res), 'peer');
        ref.markSuccess(f.channel, f.task.id, now, res.stats.downloadMs);
        const ch = await m.channels.get(f.channel);
        ref.setChangeInterval(f.channel, ch.changeInterval);
        if (ref.channel(f.channel).group !== ch.group) {
          ref.setGroup(f.channel, ch.group);
          moves++;
        }
        flying.splice(i, 1);
      } else if (r < 0.45) {
        await m.tasks.onDispatched(f.task.id, { status: 'rejected', reason: 'test' });
        ref.markFailure(f.channel, f.task.id, now);
        flying.splice(i, 1);
      }
    }
    // the operator: moves a channel, changes an interval, deletes one, adds some
    const ids = ref.channelIds();
    const any = () => ids[randomInt(rng, ids.length)]!;
    const op = rng.next();
    if (op < 0.08 && ids.length > 0) {
      const id = any();
      const g = randomInt(rng, 5);
      await m.channels.update(id, { group: g });
      ref.setGroup(id, g);
      moves++;
    } else if (op < 0.14 && ids.length > 0) {
      const id = any();
      const ci = uniform(rng, 10, 4000);
      await m.channels.update(id, { changeInterval: ci });
      ref.setChangeInterval(id, ci);
    } else if (op < 0.18 && ids.length > 0) {
      const id = any();
      await m.channels.delete(id);
      ref.remove(id);
      for (let i = flying.length - 1; i >= 0; i--) if (flying[i]!.channel === id) flying.splice(i, 1);
    } else if (op < 0.22) await addChannels(1 + randomInt(rng, 4));
    await compare(`after step ${step}`);
    if (step % 20 === 19) await compareChannels(`after step ${step}`);
  }
  await compareChannels('at the end');
  return { issued: issuedTotal, rounds, moves, parked, groupEncouraged, budgets };
}

describe('disk-backed scheduler against the in-memory reference', () => {
  it('IIR: same issue order, rounds and group statistics on a seeded workload', async () => {
    const r = await run('iir', 1, 260);
    // the workload exercised what it is meant to
    expect(r.issued).toBeGreaterThan(500);
    expect(r.rounds).toBeGreaterThanOrEqual(3);
    expect(r.moves).toBeGreaterThan(5);
    expect(r.parked).toBeGreaterThan(0); // channels waited behind a busy host
  }, 240_000);

  it('ICR: same issue order, rounds (θ from a pass through the records) and statistics', async () => {
    const r = await run('icr', 2, 160);
    expect(r.rounds).toBeGreaterThanOrEqual(2);
  }, 240_000);

  it("ICR with the per-group encourage step (icrEncourage 'group'): per-group window counts from the aggregates", async () => {
    const r = await run('icr', 3, 160, { icrEncourage: 'group' });
    expect(r.rounds).toBeGreaterThanOrEqual(2);
    expect(r.groupEncouraged).toBeGreaterThan(0);
  }, 240_000);

  // CAF from the manager's pass through the records and the load its loadSource gives:
  // the same rounds as src/recrawl's reassignCAF over the resident records given the
  // same load. Queues twice the threads for the first 60 steps, then idle threads.
  const queuedThenIdle = (step: number): SystemLoad => (step < 60 ? { threads: 50, running: 50, queued: 100 } : { threads: 50, running: 10, queued: 0 });

  it('CAF: same rounds as the in-memory reference fed the same load; the budget falls under long queues and rises while threads idle', async () => {
    const r = await run('caf', 4, 160, {}, queuedThenIdle);
    expect(r.rounds).toBeGreaterThanOrEqual(10);
    const queued = r.budgets.filter(([s]) => s < 60);
    const idle = r.budgets.filter(([s]) => s >= 60);
    expect(queued.length).toBeGreaterThanOrEqual(4);
    expect(idle.length).toBeGreaterThanOrEqual(4);
    // long queues (error min(0.95 − 1, 0.9 − 2) = −1.1): down by the largest step, 1/1.25, each round;
    // idle threads (0.95 − 0.2): up by 1.25 each round, until the allocation's bounds cap the budget
    expect(queued.every(([, , up]) => !up)).toBe(true);
    expect(idle.every(([, , up]) => up)).toBe(true);
    for (let i = 1; i < 4; i++) expect(queued[i]![1] / queued[i - 1]![1]).toBeCloseTo(0.8, 2);
    for (let i = 1; i < 3; i++) expect(idle[i]![1] / idle[i - 1]![1]).toBeCloseTo(1.25, 2);
    expect(Math.max(...idle.map(([, b]) => b))).toBeGreaterThan(2 * queued.at(-1)![1]);
  }, 240_000);

  it('CAF without any load heard (no crawler reported recently) falls back to steering the success rate, like the reference', async () => {
    const fed = await run('caf', 5, 120, {}, () => ({ threads: 50, running: 10, queued: 0 }));
    const none = await run('caf', 5, 120, {}, () => null);
    expect(none.rounds).toBeGreaterThanOrEqual(5);
    // the same workload: the budgets part where the load (idle threads) steers one and the success rate the other
    expect(none.budgets.map(([, b]) => b)).not.toEqual(fed.budgets.map(([, b]) => b));
  }, 240_000);
});
