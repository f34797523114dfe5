import { describe, expect, it } from 'vitest';
import type { Coordinate } from '../../src/coords/index.js';
import { NO_FORWARD_HOPS } from '../../src/dht/task-protocol.js';
import {
  CandidateSet,
  forward,
  loadFractionOf,
  mayForward,
  hasRoom,
  mayTryNext,
  walkClaimed,
  place,
  placementOptions,
  rankCandidates,
  rankInto,
  type Candidate,
} from '../../src/dht/placement.js';

const at = (x: number, y: number, height = 0): Coordinate => ({ vec: Float64Array.from([x, y]), height, error: 0.2 });
const idle = { running: 0, queued: 0, free: 10 };
const busy = (running: number, queued: number) => ({ running, queued, free: 10 - running - queued });
const full = { running: 5, queued: 5, free: 0 };
const policy = placementOptions();
const host = at(0, 0, 5);

describe('placement policy: which crawler gets a task', () => {
  it('the nearest crawler with room wins', () => {
    const cands: Candidate[] = [
      { id: 'far', coord: at(80, 0, 5), load: idle },
      { id: 'near', coord: at(10, 0, 5), load: busy(2, 0) },
      { id: 'mid', coord: at(40, 0, 5), load: idle },
    ];
    const p = place(host, cands, policy);
    expect(p).toEqual({ kind: 'send', order: ['near', 'mid', 'far'] });
  });

  it('load breaks near-ties: a less loaded crawler slightly farther wins, a much farther one does not', () => {
    const cands: Candidate[] = [
      { id: 'near-loaded', coord: at(20, 0, 5), load: busy(5, 4) },
      { id: 'slightly-farther-idle', coord: at(24, 0, 5), load: idle },
      { id: 'twice-as-far-idle', coord: at(60, 0, 5), load: idle },
    ];
    expect(rankCandidates(host, cands, policy)).toEqual(['slightly-farther-idle', 'near-loaded', 'twice-as-far-idle']);
    // With load ignored, distance alone decides.
    expect(rankCandidates(host, cands, placementOptions({ loadWeight: 0 }))[0]).toBe('near-loaded');
  });

  it('a crawler with room within the spill bound comes before full ones; full ones are still tried (they forward)', () => {
    const cands: Candidate[] = [
      { id: 'full-near', coord: at(5, 0, 5), load: full },
      { id: 'full-nearer', coord: at(2, 0, 5), load: full },
      { id: 'room-within-spill', coord: at(12, 0, 5), load: busy(5, 4) },
    ];
    // nearest RTT 12 ms, spill 4: room up to 48 ms counts as near.
    expect(rankCandidates(host, cands, policy)).toEqual(['room-within-spill', 'full-nearer', 'full-near']);
  });

  it('queueSpill: a crawler with tasks queued counts as room only within queueSpill × the nearest RTT; one with an empty queue within spill', () => {
    const cands: Candidate[] = [
      { id: 'full-nearest', coord: at(2, 0, 5), load: full },
      { id: 'queued-3x', coord: at(26, 0, 5), load: busy(5, 2) },
      { id: 'idle-3.5x', coord: at(32, 0, 5), load: idle },
    ];
    // Nearest 12 ms: spill 4 → 48 ms, queueSpill 2 → 24 ms; queued-3x lies at 36 ms.
    expect(rankCandidates(host, cands, policy)).toEqual(['idle-3.5x', 'queued-3x', 'full-nearest']);
    const q = placementOptions({ queueSpill: 2 });
    expect(rankCandidates(host, cands, q)).toEqual(['idle-3.5x', 'full-nearest', 'queued-3x']);
    // Without the idle one the nearest (full) comes first: it forwards to a neighbour.
    expect(rankCandidates(host, cands.slice(0, 2), q)).toEqual(['full-nearest', 'queued-3x']);
    expect(() => placementOptions({ queueSpill: 0 })).toThrow(/queueSpill/);
  });

  it('a crawler with room 3× as far as the full nearest ones takes the task (spill 4, since session 11), not a walk through full neighbours', () => {
    const cands: Candidate[] = [
      { id: 'full-nearer', coord: at(2, 0, 5), load: full },
      { id: 'full-near', coord: at(5, 0, 5), load: full },
      { id: 'room-3x', coord: at(26, 0, 5), load: busy(5, 2) },
    ];
    // 36 ms against the nearest's 12: within 4×, so before the full ones.
    expect(rankCandidates(host, cands, policy)).toEqual(['room-3x', 'full-nearer', 'full-near']);
    // The bound before session 11 (2×) sent it to the nearest, full, to forward.
    expect(rankCandidates(host, cands, placementOptions({ spill: 2 }))).toEqual(['full-nearer', 'full-near', 'room-3x']);
  });

  it('hot spot: beyond the spill bound the nearest crawlers come first, full or not, so a neighbour of theirs takes the task', () => {
    const cands: Candidate[] = [
      { id: 'room-far', coord: at(300, 0, 5), load: idle },
      { id: 'full-near', coord: at(5, 0, 5), load: full },
      { id: 'full-nearer', coord: at(2, 0, 5), load: full },
      { id: 'room-beyond-spill', coord: at(50, 0, 5), load: idle },
    ];
    expect(rankCandidates(host, cands, policy)).toEqual(['full-nearer', 'full-near', 'room-beyond-spill', 'room-far']);
    // Without the bound, any crawler with room goes first however far it is.
    expect(rankCandidates(host, cands, placementOptions({ spill: Infinity }))).toEqual(['room-beyond-spill', 'room-far', 'full-nearer', 'full-near']);
  });

  it('an unknown load counts as room at the middle fraction; an unknown coordinate ranks last', () => {
    const cands: Candidate[] = [
      { id: 'no-coord', load: idle },
      { id: 'unknown-load', coord: at(10, 0, 5) },
      { id: 'idle', coord: at(14, 0, 5), load: idle },
    ];
    // unknown load: 20 × 1.25 = 25 > idle's 24.
    expect(rankCandidates(host, cands, policy)).toEqual(['idle', 'unknown-load', 'no-coord']);
  });

  it('tries at most maxAttempts crawlers', () => {
    const cands: Candidate[] = Array.from({ length: 10 }, (_, i) => ({ id: `c${i}`, coord: at(10 + i, 0, 5), load: idle }));
    const p = place(host, cands, placementOptions({ maxAttempts: 3 }));
    expect(p).toEqual({ kind: 'send', order: ['c0', 'c1', 'c2'] });
  });

  it('fullWalkEnds: a full answer from a walk ends a coordinate-routed task\'s attempts when the next candidate is known full; one without a walk, a hash-routed task, or off: the next is tried', () => {
    const on = placementOptions({ fullWalkEnds: true });
    expect(mayTryNext(true, true, false, on)).toBe(false);
    expect(mayTryNext(false, true, false, on)).toBe(true);
    // A hash-routed task's next candidate lies anywhere: the walk says nothing of it.
    expect(mayTryNext(true, false, false, on)).toBe(true);
    expect(policy.fullWalkEnds).toBe(true); // the default since session 13
    expect(mayTryNext(true, true, false, placementOptions({ fullWalkEnds: false }))).toBe(true);
  });

  it('a walk is believed only beside a reply load with no free slot (walkClaimed)', () => {
    expect(walkClaimed(true, { running: 2, queued: 2, free: 0 })).toBe(true);
    expect(walkClaimed(true, { running: 0, queued: 0, free: 3 })).toBe(false);
    expect(walkClaimed(true, undefined)).toBe(false);
    expect(walkClaimed(false, { running: 2, queued: 2, free: 0 })).toBe(false);
    expect(walkClaimed(undefined, { running: 2, queued: 2, free: 0 })).toBe(false);
  });

  it('the walk guard: a next candidate whose own load has room (or is unknown) is tried after a walked full answer', () => {
    const on = placementOptions({ fullWalkEnds: true });
    expect(mayTryNext(true, true, true, on)).toBe(true);
    expect(hasRoom({ running: 1, queued: 0, free: 1 })).toBe(true);
    expect(hasRoom({ running: 4, queued: 2, free: 0 })).toBe(false);
    // An unknown load counts as room, as the ranking counts it: a peer nothing speaks against is tried.
    expect(hasRoom(undefined)).toBe(true);
    // The router's wiring: walked + coordinate + the next one's load decides.
    const known = (load: Parameters<typeof hasRoom>[0]) => mayTryNext(true, true, hasRoom(load), on);
    expect(known({ running: 4, queued: 2, free: 0 })).toBe(false);
    expect(known({ running: 0, queued: 0, free: 6 })).toBe(true);
    expect(known(undefined)).toBe(true);
  });

  it('no crawler online: a clear outcome, nothing to try', () => {
    expect(place(host, [], policy)).toEqual({ kind: 'no-crawler' });
  });

  it('equal scores keep the given order (the simulator and the router agree on ties)', () => {
    const cands: Candidate[] = [
      { id: 'b', coord: at(0, 10, 5), load: idle },
      { id: 'a', coord: at(10, 0, 5), load: idle },
    ];
    expect(rankCandidates(host, cands, policy)).toEqual(['b', 'a']);
  });
});

describe('placement policy: forwarding from a full crawler', () => {
  const self = at(12, 0, 5);
  const known: Candidate[] = [
    { id: 'full-neighbour', coord: at(13, 0, 5), load: full },
    { id: 'near-host', coord: at(3, 0, 5), load: busy(3, 0) },
    { id: 'near-self-away-from-host', coord: at(22, 0, 5), load: idle },
    { id: 'far', coord: at(200, 0, 5), load: idle },
    { id: 'farther', coord: at(300, 0, 5), load: idle },
  ];

  it('forwards within the hop limit in placement order, at most forwardFanout: room near the host first, then the nearest, full or not', () => {
    // near-host and the idle one farther away have room within 4× the nearest RTT (13 ms),
    // by score; then by RTT from the host: the full neighbour (it forwards on through its own peers).
    const d = forward({ hops: 0, host, self }, known, policy);
    expect(d).toEqual({ kind: 'forward', hops: 1, targets: ['near-host', 'near-self-away-from-host', 'full-neighbour'] });
    // With spill 2 (26 ms) the idle one (32 ms) is beyond the bound: the full neighbour, nearer, comes first.
    const two = forward({ hops: 0, host, self }, known, placementOptions({ spill: 2 }));
    expect(two).toEqual({ kind: 'forward', hops: 1, targets: ['near-host', 'full-neighbour', 'near-self-away-from-host'] });
    // At the last hop only crawlers with room count: the receiver could not forward again.
    const last = forward({ hops: policy.maxHops - 1, host, self }, known, policy);
    expect(last).toEqual({ kind: 'forward', hops: policy.maxHops, targets: ['near-host', 'near-self-away-from-host', 'far'] });
  });

  it('lastHopBound: at the last hop a crawler with room counts only within the bound × the forwarder\'s own RTT to the host', () => {
    // self is 12 ms + heights (22 ms) from the host: bound 2 admits targets up to 44 ms.
    const bounded = placementOptions({ lastHopBound: 2 });
    const last = forward({ hops: bounded.maxHops - 1, host, self }, known, bounded);
    expect(last).toEqual({ kind: 'forward', hops: bounded.maxHops, targets: ['near-host', 'near-self-away-from-host'] });
    // Only far crawlers with room: refuse, so the walk tries its other branches.
    expect(forward({ hops: bounded.maxHops - 1, host, self }, known.slice(3), bounded)).toEqual({ kind: 'refuse', reason: 'no-target' });
    // Before the last hop the bound does not apply.
    const early = forward({ hops: 0, host, self }, known.slice(3), bounded);
    expect(early.kind === 'forward' && early.targets).toEqual(['far', 'farther']);
    // Without a host coordinate (anchored at itself) it does not apply either.
    const noHost = forward({ hops: bounded.maxHops - 1, self }, known.slice(3), bounded);
    expect(noHost.kind).toBe('forward');
    expect(() => placementOptions({ lastHopBound: 0.5 })).toThrow(/lastHopBound/);
  });

  it('outward: before the last hop, full crawlers farther from the host than the forwarder come first', () => {
    // self is 22 ms from the host; full crawlers at 16 (inward), 23 and 40 ms.
    const fulls: Candidate[] = [
      { id: 'full-inward', coord: at(6, 0, 5), load: full },
      { id: 'full-neighbour', coord: at(13, 0, 5), load: full },
      { id: 'full-out', coord: at(30, 0, 5), load: full },
    ];
    const out = placementOptions({ outward: true });
    expect(forward({ hops: 0, host, self }, fulls, policy)).toEqual({ kind: 'forward', hops: 1, targets: ['full-inward', 'full-neighbour', 'full-out'] });
    expect(forward({ hops: 0, host, self }, fulls, out)).toEqual({ kind: 'forward', hops: 1, targets: ['full-neighbour', 'full-out', 'full-inward'] });
    // A crawler with room within the spill bound still comes first, inward or not.
    const withRoom = [...fulls, { id: 'room-inward', coord: at(4, 0, 5), load: busy(5, 1) }];
    expect(forward({ hops: 0, host, self }, withRoom, out)).toEqual({ kind: 'forward', hops: 1, targets: ['room-inward', 'full-neighbour', 'full-out'] });
    expect(() => placementOptions({ outward: 1 as never })).toThrow(/outward/);
  });

  it('refuses at the hop limit', () => {
    expect(mayForward(policy.maxHops, policy)).toBe(false);
    expect(forward({ hops: policy.maxHops, host, self }, known, policy)).toEqual({ kind: 'refuse', reason: 'hop-limit' });
    expect(forward({ hops: 0, host, self }, known, placementOptions({ maxHops: 0 }))).toEqual({ kind: 'refuse', reason: 'hop-limit' });
    // An order sent at the wire's ceiling (a spot check meant for one verifier) is never forwarded, whatever the receiver's limit.
    expect(forward({ hops: NO_FORWARD_HOPS, host, self }, known, placementOptions({ maxHops: 16 }))).toEqual({ kind: 'refuse', reason: 'hop-limit' });
  });

  it('refuses at the last hop when no known crawler has room; before it, passes the task on to a full neighbour', () => {
    expect(forward({ hops: policy.maxHops - 1, host, self }, [known[0]!], policy)).toEqual({ kind: 'refuse', reason: 'no-target' });
    expect(forward({ hops: 0, host, self }, [known[0]!], policy)).toEqual({ kind: 'forward', hops: 1, targets: ['full-neighbour'] });
    expect(forward({ hops: 0, host, self }, [], policy)).toEqual({ kind: 'refuse', reason: 'no-target' });
  });

  it("anchors at itself without a host coordinate, or with forwardAnchor 'self' (the paper's rule)", () => {
    const noHost = forward({ hops: 0, self }, known, policy);
    expect(noHost.kind === 'forward' && noHost.targets[0]).toBe('near-self-away-from-host');
    const paper = forward({ hops: 0, host, self }, known, placementOptions({ forwardAnchor: 'self' }));
    expect(paper.kind === 'forward' && paper.targets[0]).toBe('near-self-away-from-host');
  });
});

describe('placement options and the candidate set', () => {
  it('validates options and names the bad one', () => {
    expect(() => placementOptions({ loadWeight: -1 })).toThrow(/loadWeight/);
    expect(() => placementOptions({ maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => placementOptions({ maxHops: 1.5 })).toThrow(/maxHops/);
    expect(() => placementOptions({ forwardAnchor: 'elsewhere' as 'host' })).toThrow(/forwardAnchor/);
    expect(() => placementOptions({ spill: 0.5 })).toThrow(/spill/);
    expect(() => placementOptions({ fullWalkEnds: 1 as never })).toThrow(/fullWalkEnds/);
    expect(() => placementOptions({ nope: 1 } as never)).toThrow(/unknown option 'nope'/);
    expect(placementOptions({ maxHops: undefined }).maxHops).toBe(3);
  });

  it('load fraction: (running + queued) / slots; no slots at all is full', () => {
    expect(loadFractionOf(5, 0, 5)).toBe(0.5);
    expect(loadFractionOf(0, 0, 0)).toBe(1);
  });

  it('a reused set ranks the top k like a full ranking, and grows past its initial size', () => {
    const set = new CandidateSet<number>();
    const all: Candidate<number>[] = [];
    for (let i = 0; i < 100; i++) {
      const rtt = 10 + ((i * 37) % 50);
      const running = i % 6;
      set.add(i, rtt, running, 0, 10 - running);
      all.push({ id: i, rttMs: rtt, load: { running, queued: 0, free: 10 - running } });
    }
    const out = new Int32Array(5);
    expect(rankInto(set, policy, out, 5)).toBe(5);
    const ranked = rankCandidates(at(0, 0), all, policy);
    expect(Array.from(out, (i) => set.ids[i])).toEqual(ranked.slice(0, 5));
    set.clear();
    expect(rankInto(set, policy, out, 5)).toBe(0);
  });
});
