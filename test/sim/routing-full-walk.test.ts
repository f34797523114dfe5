// The placement policy's fullWalkEnds rule in the simulator (sim/routing.ts
// route, the live Router's loop in test/dht/router-full-walk.test.ts): a first
// candidate whose walk through its neighbours came back full ends the route,
// an answer without a walk does not, and a walk that finds room still places.
import { describe, expect, it } from 'vitest';
import type { LatencyMatrix } from '../../src/coords/index.js';
import { createRng, uniform } from '../../src/rng.js';
import { SimRouter, type CrawlerView } from '../../sim/routing.js';
import { buildWorld, scenarioConfig } from '../../sim/world.js';

function latency(n: number): LatencyMatrix {
  const rtt = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) rtt[i * n + j] = i === j ? 0 : 10 + Math.abs(i - j);
  return { n, rtt, source: 'synthetic' };
}

const C = 15;

/** 15 crawlers within a few ms of host 0 (the search finds them all); `takes`
 * says who takes a task, `reportsRoom` whose load (as the search reads it) says it has room. */
function router(fullWalkEnds: boolean, knownPeers: number, takes: (c: number) => boolean, reportsRoom: (c: number) => boolean = () => false): SimRouter {
  const world = buildWorld(latency(12), { ...scenarioConfig('rec', true), hosts: 4, crawlers: C, embedRounds: 50 }, 3);
  const rng = createRng(9);
  const d = world.dims;
  for (let c = 0; c < C; c++) {
    for (let a = 0; a < d; a++) world.crawlerVec[c * d + a] = world.hostVec[a]! + uniform(rng, -6, 6);
    world.crawlerHeight[c] = uniform(rng, 1, 8);
  }
  // Every crawler but `reportsRoom`'s reports itself full (running and queue at
  // their bounds), so the ranking sends the task to the nearest, which forwards.
  const view: CrawlerView = {
    online: new Uint8Array(C).fill(1),
    running: Uint8Array.from({ length: C }, (_, c) => (reportsRoom(c) ? 0 : 5)),
    qLen: new Uint8Array(C).fill(5),
    threads: 5,
    queue: 5,
    purge: () => undefined,
    accept: (_s, c) => takes(c),
  };
  const sim = new SimRouter(world, 'coord', view, 1, { placement: { fullWalkEnds }, knownPeers, knownRandom: 0, peerSeed: 1, stretchSamples: 1, expectedRoutes: 1 });
  for (let c = 0; c < C; c++) sim.join(c, 0);
  return sim;
}

describe('the simulator: a full walk ends the route (placement fullWalkEnds)', () => {
  it('every crawler full: on, one attempt and its walk; off, all four attempts', () => {
    const on = router(true, 4, () => false);
    const off = router(false, 4, () => false);
    for (let s = 0; s < 10; s++) {
      expect(on.route(s, 0, 1 + s)).toBe(-1);
      expect(off.route(s, 0, 1 + s)).toBe(-1);
    }
    const a = on.stats();
    const b = off.stats();
    expect(a.refused).toBe(10);
    expect(b.refused).toBe(10);
    expect(a.attemptsPerTask).toBe(1);
    expect(a.endedByWalkPerTask).toBe(1);
    expect(b.attemptsPerTask).toBe(4);
    expect(b.endedByWalkPerTask).toBeUndefined();
    // The walk itself is the same: the later attempts are what the rule saves.
    expect(a.sendsPerTask).toBeGreaterThan(1);
    expect(a.sendsPerTask).toBeLessThan(b.sendsPerTask);
  });

  it('a full answer without a walk (the crawler knows nobody) still tries the next candidates', () => {
    const on = router(true, 0, () => false);
    expect(on.route(0, 0, 1)).toBe(-1);
    const a = on.stats();
    expect(a.attemptsPerTask).toBe(4);
    expect(a.sendsPerTask).toBe(4);
    expect(a.endedByWalkPerTask).toBe(0);
  });

  it('a walk that finds room places the task where it did without the rule', () => {
    const probe = router(false, 4, () => false);
    const first = probe.choose(0, 1)[0]!;
    const room = probe.forwardChoice(0, first, -1, 0, 1).targets[0]!;
    const on = router(true, 4, (c) => c === room);
    const off = router(false, 4, (c) => c === room);
    expect(on.route(0, 0, 1)).toBe(room);
    expect(off.route(0, 0, 1)).toBe(room);
    expect(on.stats().attemptsPerTask).toBe(1);
    expect(on.stats().forwardHopsMean).toBe(1);
  });

  it('the walk guard: a first candidate that refuses and walks full (a liar, or a stale load) does not end the route when the next one reports room', () => {
    // Two crawlers report room, L ranked first, R second, and L's walk does not reach R:
    // L refuses (the liar), its walk through full neighbours comes back full.
    let pair: [number, number] | undefined;
    for (let a = 0; a < C && pair === undefined; a++) {
      for (let b = a + 1; b < C && pair === undefined; b++) {
        const probe = router(true, 4, () => false, (c) => c === a || c === b);
        const [l, r] = probe.choose(0, 1);
        const walk = probe.forwardChoice(0, l!, -1, 0, 1).targets;
        if (walk.length > 0 && !walk.includes(r!) && (l === a || l === b) && (r === a || r === b)) pair = [l!, r!];
      }
    }
    expect(pair).toBeDefined();
    const [l, r] = pair!;
    const room = (c: number) => c === l || c === r;
    const guarded = router(true, 4, (c) => c === r, room);
    expect(guarded.route(0, 0, 1)).toBe(r);
    expect(guarded.stats().attemptsPerTask).toBe(2);
    expect(guarded.stats().endedByWalkPerTask).toBe(0);
    // The same world with R known full (it still takes a task): the claim stands, one attempt.
    const uncontradicted = router(true, 4, (c) => c === r, (c) => c === l);
    expect(uncontradicted.choose(0, 1)[0]).toBe(l);
    expect(uncontradicted.route(0, 0, 1)).toBe(-1);
    expect(uncontradicted.stats().attemptsPerTask).toBe(1);
    expect(uncontradicted.stats().endedByWalkPerTask).toBe(1);
  });
});
