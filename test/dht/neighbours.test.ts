// The bounded neighbour set a node probes for Vivaldi: plain data, so driven
// here with synthetic candidates on a line.
import { describe, expect, it } from 'vitest';
import { NeighbourSet, neighbourOptions, type Candidate } from '../../src/dht/neighbours.js';
import type { Coordinate } from '../../src/coords/index.js';
import { createRng } from '../../src/rng.js';

const at = (x: number): Coordinate => ({ vec: Float64Array.from([x, 0]), height: 0, error: 0.1 });
const line = (n: number, from = 0): Candidate[] => Array.from({ length: n }, (_, i) => ({ id: `p${from + i}`, coord: at(10 * (from + i)) }));

describe('neighbour set', () => {
  it('validates its bounds', () => {
    expect(() => neighbourOptions({ near: -1 })).toThrow(/near/);
    expect(() => neighbourOptions({ near: 0, far: 0 })).toThrow(/at least 1/);
    expect(() => neighbourOptions({ rotateEvery: 0 })).toThrow(/rotateEvery/);
    expect(() => neighbourOptions({ nearMargin: 1 })).toThrow(/nearMargin/);
    expect(() => neighbourOptions({ nearMarginMs: -1 })).toThrow(/nearMarginMs/);
  });

  it('keeps the nearest crawlers plus random far ones, never more than near + far', () => {
    const s = new NeighbourSet({ near: 3, far: 4 }, createRng(1));
    const cands = line(40);
    s.update(cands, at(0));
    expect(s.size).toBe(7);
    expect(s.members().slice(0, 3)).toEqual(['p0', 'p1', 'p2']);
    expect(new Set(s.members()).size).toBe(7);
  });

  it('fills every slot at random until its own coordinate is settled', () => {
    const s = new NeighbourSet({ near: 3, far: 4 }, createRng(2));
    s.update(line(40), undefined);
    expect(s.size).toBe(7);
    expect(s.members().filter((id) => ['p0', 'p1', 'p2'].includes(id)).length).toBeLessThan(3);
  });

  it('drops departed members, refills from who is left, and says what changed', () => {
    const s = new NeighbourSet({ near: 2, far: 3 }, createRng(3));
    const cands = line(20);
    s.update(cands, at(0));
    const gone = new Set(s.members().slice(1, 4));
    const change = s.update(cands.filter((c) => !gone.has(c.id)), at(0));
    expect(change.removed.sort()).toEqual([...gone].sort());
    expect(change.added).toHaveLength(3);
    expect(s.size).toBe(5);
    expect(s.members().some((id) => gone.has(id))).toBe(false);
  });

  it('keeps its near members while predicted RTTs jitter, and swaps one only for a clearly nearer peer', () => {
    const s = new NeighbourSet({ near: 3, far: 0, nearMargin: 0.25, nearMarginMs: 5 }, createRng(8));
    const cands = line(30);
    s.update(cands, at(0));
    const near = () => s.members().sort();
    expect(near()).toEqual(['p0', 'p1', 'p2']);
    // p3 drifts to just inside p2's distance, and back: not worth a new connection.
    const moved = (id: string, x: number) => cands.map((c) => (c.id === id ? { ...c, coord: at(x) } : c));
    expect(s.update(moved('p3', 18), at(0)).added).toEqual([]);
    expect(near()).toEqual(['p0', 'p1', 'p2']);
    // Two outsiders come much nearer: one swap per update, the farthest member goes.
    const closer = moved('p3', 1).map((c) => (c.id === 'p4' ? { ...c, coord: at(2) } : c));
    const first = s.update(closer, at(0));
    expect(near()).toEqual(['p0', 'p1', 'p3']);
    expect(first.removed).toContain('p2');
    s.update(closer, at(0));
    expect(near()).toEqual(['p0', 'p3', 'p4']);
  });

  it('does not empty its near part when its own coordinate looks unsettled again', () => {
    const s = new NeighbourSet({ near: 3, far: 3 }, createRng(9));
    const cands = line(30);
    s.update(cands, at(0));
    const before = s.members();
    // Unsettled (no coordinate to judge by), settled, unsettled again: nothing changes.
    for (let k = 0; k < 6; k++) {
      const change = s.update(cands, k % 2 === 0 ? undefined : at(0));
      expect(change).toEqual({ added: [], removed: [] });
    }
    expect(s.members()).toEqual(before);
    // A member that left is still dropped while unsettled, and its slot refilled.
    const change = s.update(cands.filter((c) => c.id !== 'p1'), undefined);
    expect(change.removed).toEqual(['p1']);
    expect(change.added).toHaveLength(1);
    expect(s.size).toBe(6);
  });

  it('with fewer candidates than slots, takes them all', () => {
    const s = new NeighbourSet({ near: 4, far: 4 }, createRng(4));
    s.update(line(3), at(0));
    expect(s.members().sort()).toEqual(['p0', 'p1', 'p2']);
  });

  it('rotates one far member every rotateEvery picks, so new peers get measured', () => {
    const s = new NeighbourSet({ near: 1, far: 2, rotateEvery: 4 }, createRng(5));
    const cands = line(30);
    s.update(cands, at(0));
    const seen = new Set(s.members());
    for (let round = 0; round < 60; round++) {
      s.rotate(cands);
      s.pick(1);
      s.members().forEach((id) => seen.add(id));
      expect(s.size).toBe(3);
    }
    expect(seen.size).toBeGreaterThan(10);
  });

  it('swaps no sooner than rotateMinMs after the last swap, however fast it picks', () => {
    const s = new NeighbourSet({ near: 1, far: 2, rotateEvery: 1, rotateMinMs: 60_000 }, createRng(7));
    const cands = line(30);
    s.update(cands, at(0));
    let swaps = 0;
    // Two picks a second for five minutes: a pick-count alone would swap 600 times.
    for (let t = 0; t < 300_000; t += 500) {
      swaps += s.rotate(cands, t).added.length;
      s.pick(1);
    }
    expect(swaps).toBe(5);
  });

  it('picks distinct members, alternating between the near and the far part', () => {
    const s = new NeighbourSet({ near: 2, far: 2 }, createRng(6));
    s.update(line(10), at(0));
    const near = new Set(s.members().slice(0, 2));
    const picks = Array.from({ length: 40 }, () => s.pick(1)[0]!);
    const nearShare = picks.filter((id) => near.has(id)).length / picks.length;
    expect(nearShare).toBe(0.5);
    const two = s.pick(2);
    expect(new Set(two).size).toBe(2);
  });
});
