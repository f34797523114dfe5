import { describe, expect, it } from 'vitest';
import { announceCells, blockAround, cellAt, cellSide, DEFAULT_CELLS, hostKey, levels, morton } from '../../src/dht/cells.js';

const at = (...v: number[]) => ({ vec: Float64Array.from(v) });

describe('coordinate cells', () => {
  it('nests levels: a coarse code is the prefix (in bits) of the finer codes inside it', () => {
    const c = at(37.5, -120.25);
    for (let l = DEFAULT_CELLS.minLevel; l < DEFAULT_CELLS.maxLevel; l++) {
      const a = cellAt(c, l);
      const b = cellAt(c, l + 1);
      for (let d = 0; d < 2; d++) expect(b.index[d]! >> 1).toBe(a.index[d]);
    }
  });

  it('interleaves bits in Morton order', () => {
    expect(morton([1, 0], 1)).toBe('2');
    expect(morton([0, 1], 1)).toBe('1');
    expect(morton([3, 3], 2)).toBe('f');
  });

  it('announces one cell per level, finest first, stable keys', () => {
    const cells = announceCells(at(10, 10));
    expect(cells.map((c) => c.level)).toEqual(levels());
    expect(levels()).toEqual([8, 6, 4, 2]);
    expect(cells[0]!.level).toBe(DEFAULT_CELLS.maxLevel);
    expect(cellAt(at(10, 10), 5).cid.toString()).toBe(cellAt(at(10.5, 10.5), 5).cid.toString());
  });

  it('the search block around a point contains its cell and the neighbour across the nearer edge', () => {
    const side = cellSide(6);
    const x = side * 3 - 1; // just below an edge on axis 0
    const block = blockAround(at(x, 0.3 * side), 6);
    expect(block.length).toBe(4);
    expect(block.map((c) => c.name)).toContain(cellAt(at(x, 0.3 * side), 6).name);
    expect(block.map((c) => c.name)).toContain(cellAt(at(x + 2, 0.3 * side), 6).name);
  });

  it('clamps coordinates outside the cube and ignores NaN', () => {
    expect(cellAt(at(1e9, -1e9), 4).index).toEqual([15, 0]);
    expect(cellAt(at(Number.NaN, 0), 4).index).toEqual([8, 8]);
  });

  it('hashes host names case-insensitively', () => {
    expect(hostKey('Example.COM').toString()).toBe(hostKey('example.com').toString());
  });
});
