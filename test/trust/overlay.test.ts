// Issue 13, item 4, with real libp2p nodes on loopback: a router checks a
// crawler's coordinate claim and announced cells through witnesses that time
// the raw round trip to it; the latency each crawler imposes on probes from
// each peer (coord-protocol's probeDelay hook) makes the loopback network a
// plane where RTT = distance. Coordinates are held fixed (stub Vivaldi), so
// what is tested is the check, not Vivaldi's convergence.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VolcrawlLibp2p } from '../../src/dht/libp2p.js';
import { loopbackLibp2p } from '../../testbed/net/loopback.js';
import { CoordService } from '../../src/dht/coord-protocol.js';
import { PeerTable } from '../../src/dht/peers.js';
import { OverlayChecker, WitnessService, askWitness, ownMisfitsMs, type OverlayVerdict } from '../../src/dht/overlay-check.js';
import { justifiedCells } from '../../src/dht/plausibility.js';
import { Router } from '../../src/dht/router.js';
import type { Coordinate, VivaldiNode } from '../../src/coords/index.js';
import { createRng } from '../../src/rng.js';

interface TestNode {
  name: string;
  libp2p: VolcrawlLibp2p;
  peers: PeerTable;
  coords: CoordService;
  witness?: WitnessService;
  /** Where the node really is (ms plane). */
  at: [number, number];
  /** What it claims. */
  claim?: Coordinate;
}

const coord = (x: number, y: number): Coordinate => ({ vec: Float64Array.from([x, y]), height: 1, error: 0.2 });
/** A Vivaldi node that stays where it is put (the claim it answers probes with). */
const fixed = (c: Coordinate): VivaldiNode => ({ coord: c, update: () => false, predict: () => 0 }) as unknown as VivaldiNode;

describe('overlay checks: coordinate claims and cell announcements against measured RTTs', () => {
  const nodes: TestNode[] = [];
  const byName = new Map<string, TestNode>();
  let router: TestNode;
  const verdicts: OverlayVerdict[] = [];
  let checker: OverlayChecker;

  beforeAll(async () => {
    // Honest crawlers around the plane; `liar` sits at (60, 60) but claims (900, 900),
    // and `spammer` claims where it is but announces cells far away.
    const specs: { name: string; at: [number, number]; claim?: [number, number] }[] = [
      { name: 'a', at: [0, 0] },
      { name: 'b', at: [120, 0] },
      { name: 'c', at: [0, 120] },
      { name: 'd', at: [120, 120] },
      { name: 'e', at: [60, -40] },
      { name: 'liar', at: [60, 60], claim: [900, 900] },
      { name: 'spammer', at: [40, 80] },
      { name: 'router', at: [60, 20] },
    ];
    for (const s of specs) {
      const libp2p = await loopbackLibp2p();
      nodes.push({ name: s.name, libp2p, peers: new PeerTable(), coords: undefined as unknown as CoordService, at: s.at, ...(s.name !== 'router' ? { claim: coord(...(s.claim ?? s.at)) } : {}) });
    }
    for (const n of nodes) byName.set(n.name, n);
    const idToNode = new Map(nodes.map((n) => [n.libp2p.peerId.toString(), n]));
    for (const n of nodes) {
      const vivaldi = n.claim !== undefined ? fixed(n.claim) : undefined;
      // RTT between two nodes = their distance: the responder holds its reply to each peer's probe that long.
      const probeDelay = (remote: string): number => {
        const r = idToNode.get(remote);
        return r === undefined ? 0 : Math.hypot(n.at[0] - r.at[0], n.at[1] - r.at[1]);
      };
      n.coords = new CoordService({ libp2p: n.libp2p, peers: n.peers, crawler: vivaldi !== undefined, rng: createRng(7), probeDelay, intervalMs: 3_600_000, fanout: 1, ...(vivaldi !== undefined ? { vivaldi } : {}) });
      await n.coords.start();
      if (vivaldi !== undefined) {
        n.witness = new WitnessService({ libp2p: n.libp2p, peers: n.peers, vivaldi });
        await n.witness.start();
      }
    }
    // A full mesh, so every crawler can witness every other.
    for (const [i, n] of nodes.entries()) for (const m of nodes.slice(i + 1)) await n.libp2p.dial(m.libp2p.getMultiaddrs()[0]!);
    router = byName.get('router')!;
    for (const n of nodes) if (n !== router) await router.coords.info(n.libp2p.peerId.toString());
    checker = new OverlayChecker({ libp2p: router.libp2p, peers: router.peers, rng: createRng(3), witnesses: 5, onVerdict: (v) => verdicts.push(v) });
  }, 60_000);

  afterAll(async () => {
    for (const n of nodes) {
      await n.witness?.stop();
      await n.coords.stop();
      await n.libp2p.stop();
    }
  });

  const id = (name: string) => byName.get(name)!.libp2p.peerId.toString();

  it('a witness times the raw round trip, including the delay the target imposes on it', async () => {
    const m = await askWitness(router.libp2p, id('a'), id('d'));
    expect(m.rttMs).toBeGreaterThanOrEqual(Math.hypot(120, 120) - 1);
    expect(Array.from(m.coord.vec)).toEqual([0, 0]);
    // A witness does not measure itself, the asker, or a peer it has never heard of.
    await expect(askWitness(router.libp2p, id('a'), id('a'))).rejects.toThrow(/unknown peer/);
    await expect(askWitness(router.libp2p, id('a'), id('router'))).rejects.toThrow(/unknown peer/);
  });

  it('a witness that has timed three crawlers reports its misfit both ways and its overshoot', async () => {
    const e = byName.get('e')!;
    // Crawlers e has timed (not in this mesh): one it predicts right, one too short, one too long.
    for (const [i, x, rtt] of [[1, 10, 12], [2, 20, 27], [3, 30, 22]] as const) e.peers.note(`timed-${i}`, { coord: coord(60 + x, -40), rttMs: rtt, crawler: true });
    try {
      const own = ownMisfitsMs(e.claim!, e.peers.all(), id('d'))!;
      expect(own.overshootMs).toBeGreaterThan(0);
      const m = await askWitness(router.libp2p, id('e'), id('d'));
      expect(m.uncertaintyMs).toBe(own.uncertaintyMs);
      expect(m.overshootMs).toBe(own.overshootMs);
    } finally {
      for (const i of [1, 2, 3]) e.peers.delete(`timed-${i}`);
    }
  });

  it('accepts an honest crawler: its claim predicts the measured RTTs and its cells contain it', async () => {
    const cells = justifiedCells(byName.get('b')!.claim!).map((c) => c.name);
    const v = await checker.verify(id('b'), cells);
    expect(v.verdict).toBe('ok');
    expect(v.claim).toBe('consistent');
    // justifiedCells lists a cell's neighbours within the margin too, so some levels have two: no fault for a router.
    expect(v.announcement!.problems.filter((p) => p.problem !== 'duplicate-level')).toEqual([]);
    expect(v.witnesses).toBeGreaterThanOrEqual(3);
    // Where the RTTs put b is where b is, within the uncertainty the fit reports (plus loopback's own delay).
    expect(Math.hypot(v.measured!.vec[0]! - 120, v.measured!.vec[1]! - 0)).toBeLessThan(v.measured!.uncertaintyMs + 20);
    expect(checker.admit(id('b'), cells)).toBe(true);
  }, 30_000);

  it('rejects a crawler announcing cells far from its measured position, though its claim is honest', async () => {
    // The spammer's claim (40, 80) is true; it announces the cells of (1500, -1500) as well as its own.
    const own = justifiedCells(byName.get('spammer')!.claim!).map((c) => c.name);
    const far = justifiedCells(coord(1500, -1500)).map((c) => c.name);
    const v = await checker.verify(id('spammer'), [...own, ...far]);
    expect(v.claim).toBe('consistent');
    expect(v.verdict).toBe('bad');
    const faulty = new Set(v.announcement!.problems.filter((p) => p.problem === 'far-from-measured').map((p) => p.name));
    // Every far cell is faulted against the measured position; none of its own cells is.
    for (const c of far) expect(faulty.has(c)).toBe(true);
    for (const c of own) expect(faulty.has(c)).toBe(false);
    expect(checker.admit(id('spammer'), own)).toBe(false);
    expect(verdicts.some((x) => x.peer === id('spammer') && x.verdict === 'bad')).toBe(true);
  }, 30_000);

  it('rejects a crawler whose coordinate claim the measured RTTs contradict, and the cells it announces there', async () => {
    const liar = byName.get('liar')!;
    const cells = justifiedCells(liar.claim!).map((c) => c.name);
    const v = await checker.verify(id('liar'), cells);
    expect(v.verdict).toBe('bad');
    expect(v.claim).toBe('inconsistent');
    expect(v.claimReasons).toContain('votes');
    // Its cells are consistent with its claim but not with where the RTTs put it (near (60, 60)).
    const faults = v.announcement!.problems.filter((p) => p.problem !== 'duplicate-level');
    expect(faults.every((p) => p.problem === 'far-from-measured')).toBe(true);
    // Every cell of the levels finer than the distance it lied by (sides 16, 64 and 256 ms);
    // a 1024 ms cell holds both where it is and where it claims to be.
    const faulty = new Set(faults.map((p) => p.name));
    const fine = cells.filter((c) => !c.includes('/2/2/'));
    expect(fine.length).toBeGreaterThan(0);
    for (const c of fine) expect(faulty.has(c)).toBe(true);
    expect(Math.hypot(v.measured!.vec[0]! - 60, v.measured!.vec[1]! - 60)).toBeLessThan(60);
  }, 30_000);

  it('a router does not route to a crawler the check refused', async () => {
    // The router's lookup finds both the liar and b as providers; only b is a candidate.
    const r = new Router({ libp2p: router.libp2p, peers: router.peers, coords: router.coords, overlay: checker });
    const liarCells = justifiedCells(byName.get('liar')!.claim!);
    const shown = { ids: [id('liar'), id('b')], complete: true };
    // Stand-in for the DHT's provider records: what is under test is the router's use of the verdict.
    (r.cellLookup as unknown as { providers: () => Promise<typeof shown> }).providers = () => Promise.resolve(shown);
    const found = await r.lookup(byName.get('liar')!.claim!);
    expect(found.states.map((p) => p.id)).toEqual([id('b')]);
    expect(checker.refusals).toBeGreaterThan(0);
    expect(liarCells.length).toBeGreaterThan(0);
  }, 30_000);
});
