import { describe, expect, it } from 'vitest';
import type { LatencyMatrix } from '../../src/coords/index.js';
import { PeerTable, type PeerState } from '../../src/dht/peers.js';
import { forward, placementOptions } from '../../src/dht/placement.js';
import { Router } from '../../src/dht/router.js';
import { createRng, uniform } from '../../src/rng.js';
import { SimRouter, type CrawlerView } from '../../sim/routing.js';
import { coordOf } from '../../sim/flat-coords.js';
import { buildWorld, crawlerCoords, hostCoords, scenarioConfig } from '../../sim/world.js';

function latency(n: number): LatencyMatrix {
  const rtt = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) rtt[i * n + j] = i === j ? 0 : 10 + Math.abs(i - j);
  return { n, rtt, source: 'synthetic' };
}

describe("the simulator's routing and the live Router", () => {
  it.each([
    ['the default policy', {}],
    ['queueSpill 1.5', { queueSpill: 1.5 }],
  ])('choose the same crawlers in the same order from the same candidates and loads: %s', (_, placement) => {
    // A world whose 15 crawlers all sit within a few ms of host 0, so the
    // simulated search finds every one of them (15 < 20 per cell).
    const world = buildWorld(latency(12), { ...scenarioConfig('rec', true), hosts: 4, crawlers: 15, embedRounds: 50 }, 3);
    const rng = createRng(9);
    const d = world.dims;
    for (let c = 0; c < 15; c++) {
      for (let a = 0; a < d; a++) world.crawlerVec[c * d + a] = world.hostVec[a]! + uniform(rng, -6, 6);
      world.crawlerHeight[c] = uniform(rng, 1, 8);
    }
    const online = new Uint8Array(15).fill(1);
    const running = new Uint8Array(15);
    const qLen = new Uint8Array(15);
    const view: CrawlerView = { online, running, qLen, threads: 5, queue: 5, purge: () => undefined, accept: () => false };
    const sim = new SimRouter(world, 'coord', view, 1, { placement, knownPeers: 4, knownRandom: 4, peerSeed: 1, stretchSamples: 1, expectedRoutes: 1 });
    for (let c = 0; c < 15; c++) sim.join(c, 0);
    const live = new Router({ libp2p: {} as never, peers: new PeerTable(), coords: {} as never, placement });
    const host = coordOf(hostCoords(world), 0);
    let spilled = 0;
    for (let round = 0; round < 200; round++) {
      for (let c = 0; c < 15; c++) {
        // Busy: most crawlers full, some with a free queue slot or thread.
        const full = rng.next() < 0.3 + round / 300;
        running[c] = full ? 5 : Math.floor(rng.next() * 6);
        qLen[c] = full ? 5 : running[c] === 5 ? Math.floor(rng.next() * 5) : 0;
      }
      const peers: PeerState[] = Array.from({ length: 15 }, (_, c) => ({
        id: String(c),
        coord: coordOf(crawlerCoords(world), c),
        load: { running: running[c]!, queued: qLen[c]!, free: 5 - running[c]! + 5 - qLen[c]! },
        seenAt: 0,
        crawler: true,
        down: false,
      }));
      const fromLive = live.rank(peers, host).slice(0, live.policy.maxAttempts).map((p) => Number(p.id));
      const fromSim = sim.choose(0, 1 + round);
      expect(fromSim).toEqual(fromLive);
      if (qLen[fromLive[0]!] === 5) spilled++;
    }
    // Both cases were exercised: a crawler with room first, and a full one first (it forwards).
    expect(spilled).toBeGreaterThan(10);
    expect(spilled).toBeLessThan(200);
  });

  it.each([
    ['the default policy', {}],
    ['a last-hop bound (lastHopBound 1)', { lastHopBound: 1 }],
    ['the outward walk', { outward: true }],
    ['queued crawlers within the nearest RTT only (queueSpill 1)', { queueSpill: 1 }],
  ])("forward a full crawler's task to the same crawlers it knows, and refuse at the same hop: %s", (_, placement) => {
    const world = buildWorld(latency(12), { ...scenarioConfig('rec', true), hosts: 4, crawlers: 40, embedRounds: 50 }, 5);
    const rng = createRng(11);
    const online = new Uint8Array(40).fill(1);
    const running = new Uint8Array(40);
    const qLen = new Uint8Array(40);
    const view: CrawlerView = { online, running, qLen, threads: 5, queue: 5, purge: () => undefined, accept: () => false };
    const sim = new SimRouter(world, 'coord', view, 1, { placement, knownPeers: 6, knownRandom: 6, peerSeed: 2, stretchSamples: 1, expectedRoutes: 1 });
    for (let c = 0; c < 40; c++) sim.join(c, 0);
    const policy = placementOptions(placement);
    // Decisions the rule under test changed (the default policy's choice differs).
    let bounded = 0;
    const hosts = hostCoords(world);
    const crawlers = crawlerCoords(world);
    let forwards = 0;
    let refusals = 0;
    for (let round = 0; round < 300; round++) {
      for (let c = 0; c < 40; c++) {
        const full = rng.next() < 0.6;
        running[c] = full ? 5 : Math.floor(rng.next() * 6);
        qLen[c] = full ? 5 : running[c] === 5 ? Math.floor(rng.next() * 5) : 0;
      }
      const h = round % 4;
      const c = Math.floor(rng.next() * 40);
      const hops = round % (policy.maxHops + 1);
      const fromSim = sim.forwardChoice(h, c, -1, hops, 1 + round);
      // The live receiver's candidates: the crawlers it knows, with the loads they reported.
      const cands = fromSim.known.map((p) => ({
        id: p,
        coord: coordOf(crawlers, p),
        load: { running: running[p]!, queued: qLen[p]!, free: 5 - running[p]! + 5 - qLen[p]! },
      }));
      const live = forward({ hops, host: coordOf(hosts, h), self: coordOf(crawlers, c) }, cands, policy);
      expect(fromSim.targets).toEqual(live.kind === 'forward' ? live.targets : []);
      if (live.kind === 'forward') forwards++;
      else refusals++;
      const unbounded = forward({ hops, host: coordOf(hosts, h), self: coordOf(crawlers, c) }, cands, placementOptions());
      if (JSON.stringify(unbounded) !== JSON.stringify(live)) bounded++;
    }
    // Both outcomes were exercised: forwarding within the hop limit, and refusing.
    expect(forwards).toBeGreaterThan(50);
    expect(refusals).toBeGreaterThan(50);
    // With a rule on, some decisions differ from the default's (the case is exercised).
    if (policy.lastHopBound < Infinity || policy.outward || policy.queueSpill < Infinity) expect(bounded).toBeGreaterThan(5);
    else expect(bounded).toBe(0);
  });
});
