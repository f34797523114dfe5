// The coordinate-space cells of the modelled overlay, laid out once per run:
// each crawler's announced cell per level (cells.ts cellIndex, numbered
// instead of hashed), each host's search block per level (blockIndices), and
// the crawlers that ever sit in each cell, in Z order, with the chunks a
// cell's answer is read in. Nothing here changes as the run goes on; it
// stands apart from overlay.ts, whose records and cache do. The Overlay
// copies these arrays' references into its own fields (no extra hop in its
// search loops).
import { blockIndices, cellIndex, levels, type CellOptions } from '../src/dht/cells.js';
import type { FlatCoords } from './flat-coords.js';

/** Members per chunk of a cell's answer (each with its own bounding box). */
export const CHUNK = 16;

/** A crawler's Z-order (Morton) key on a 2^10 grid per axis over the cells' span (at most three axes). */
function zKey(p: FlatCoords, c: number, cells: CellOptions): number {
  const d = Math.min(p.dims, 3);
  const n = 1024;
  let key = 0;
  const idx: number[] = [];
  for (let a = 0; a < d; a++) idx.push(Math.min(n - 1, Math.max(0, Math.floor(((p.vec[c * p.dims + a]! + cells.span / 2) / cells.span) * n))));
  for (let b = 9; b >= 0; b--) for (let a = 0; a < d; a++) key = key * 2 + ((idx[a]! >> b) & 1);
  return key;
}

export class CellLayout {
  /** Levels in use, finest first (li = 0 is the finest; the search goes from L − 1 down). */
  readonly levels: number[];
  readonly L: number;
  /** Cells per search block (2^d). */
  readonly B: number;
  readonly C: number;
  readonly dims: number;
  /** Crawlers that ever sit in each cell: members[start[cell] .. start[cell + 1]),
   * in Z order (membersById: the same, by crawler index). */
  readonly start: Int32Array;
  readonly members: Int32Array;
  readonly membersById: Int32Array;
  /** Cell of crawler c at level index li: crawlerCell[c·L + li]. */
  readonly crawlerCell: Int32Array;
  /** The search block of each host: blocks[(h·L + li)·B + j], −1 = none. */
  readonly blocks: Int32Array;
  /** Cell names (for tests and reports): `level/i0,i1,...`. */
  readonly cellKeys: string[];
  /** Level index of each cell. */
  readonly cellLevel: Uint8Array;
  /** The chunks of each cell's answer: chunkStart[cell] .. chunkStart[cell + 1]. */
  readonly chunkStart: Int32Array;

  constructor(hosts: FlatCoords, crawlers: FlatCoords, cellOpts: CellOptions) {
    this.levels = levels(cellOpts);
    const L = this.levels.length;
    this.L = L;
    this.dims = crawlers.dims;
    const H = hosts.height.length;
    const C = crawlers.height.length;
    this.C = C;
    const B = 1 << Math.max(1, Math.min(crawlers.dims, cellOpts.maxDims));
    this.B = B;
    const vecOf = (p: FlatCoords, i: number) => ({ vec: p.vec.subarray(i * p.dims, (i + 1) * p.dims) });
    const ids = new Map<string, number>();
    this.cellKeys = [];
    const idOf = (li: number, index: number[]): number => {
      const key = `${this.levels[li]}/${index.join(',')}`;
      let id = ids.get(key);
      if (id === undefined) {
        id = this.cellKeys.length;
        ids.set(key, id);
        this.cellKeys.push(key);
      }
      return id;
    };
    // Announced cells, one per level per crawler; search blocks per host and level.
    this.crawlerCell = new Int32Array(C * L);
    for (let c = 0; c < C; c++) {
      const at = vecOf(crawlers, c);
      for (let li = 0; li < L; li++) this.crawlerCell[c * L + li] = idOf(li, cellIndex(at, this.levels[li]!, cellOpts));
    }
    this.blocks = new Int32Array(H * L * B).fill(-1);
    for (let h = 0; h < H; h++) {
      const at = vecOf(hosts, h);
      for (let li = 0; li < L; li++) {
        const block = blockIndices(at, this.levels[li]!, cellOpts);
        for (let j = 0; j < block.length; j++) this.blocks[(h * L + li) * B + j] = idOf(li, block[j]!);
      }
    }
    const nCells = this.cellKeys.length;
    // Crawlers per cell (CSR), in Z order of their coordinates (a chunk of a cell's answer is then a compact patch).
    const count = new Int32Array(nCells + 1);
    for (let i = 0; i < this.crawlerCell.length; i++) count[this.crawlerCell[i]! + 1]!++;
    for (let i = 0; i < nCells; i++) count[i + 1]! += count[i]!;
    this.start = Int32Array.from(count);
    this.members = new Int32Array(this.crawlerCell.length);
    const fillAt = Int32Array.from(count);
    for (let c = 0; c < C; c++) for (let li = 0; li < L; li++) this.members[fillAt[this.crawlerCell[c * L + li]!]!++] = c;
    this.membersById = this.members.slice();
    const z = new Float64Array(C);
    for (let c = 0; c < C; c++) z[c] = zKey(crawlers, c, cellOpts);
    for (let cell = 0; cell < nCells; cell++) {
      const part = this.members.subarray(this.start[cell]!, this.start[cell + 1]!);
      if (part.length > 1) part.set(Array.from(part).sort((x, y) => z[x]! - z[y]! || x - y));
    }
    this.chunkStart = new Int32Array(nCells + 1);
    for (let cell = 0; cell < nCells; cell++) this.chunkStart[cell + 1] = this.chunkStart[cell]! + Math.ceil((this.start[cell + 1]! - this.start[cell]!) / CHUNK);
    this.cellLevel = new Uint8Array(nCells);
    for (let i = 0; i < this.crawlerCell.length; i++) this.cellLevel[this.crawlerCell[i]!] = i % L;
    for (let h = 0; h < H; h++) for (let li = 0; li < L; li++) for (let j = 0; j < B; j++) {
      const cell = this.blocks[(h * L + li) * B + j]!;
      if (cell >= 0) this.cellLevel[cell] = li;
    }
  }

  /** The search block of host h at level index li (finest = 0), as cell names. */
  blockOf(h: number, li: number): string[] {
    const out: string[] = [];
    for (let j = 0; j < this.B; j++) {
      const id = this.blocks[(h * this.L + li) * this.B + j]!;
      if (id >= 0) out.push(this.cellKeys[id]!);
    }
    return out;
  }
}
