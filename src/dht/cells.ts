// Coordinate-space cells as DHT keys.
//
// Vivaldi coordinates (milliseconds) are clamped into the cube [-SPAN/2, SPAN/2)^d
// and cut into a quadtree: level L has 2^L cells per axis, so a cell's side is
// SPAN / 2^L ms. A cell is named by the Morton (Z-order) code of its integer
// indices — a space-filling curve, so a level-L key is the bit-prefix of the
// level-(L+1) keys inside it — and the DHT key is the SHA-256 of
// "volcrawl/cell/v1/<d>/<L>/<morton>". The levels are 8, 6, 4, 2 (cells of
// 16, 64, 256 and 1024 ms); a crawler provides its cell at the coarsest and
// at the finer ones only where the cell above is dense (announce.ts);
// a lookup for a host starts at the coarsest level around the host's
// coordinate and goes one level finer only through dense cells (router.ts).
import { createHash } from 'node:crypto';
import { CID } from 'multiformats/cid';
import * as Digest from 'multiformats/hashes/digest';

/** What the cell code needs of a coordinate (src/coords' Coordinate fits). */
export interface CoordVec {
  vec: ArrayLike<number>;
}

export interface CellOptions {
  /** Edge of the whole cube in ms. */
  span: number;
  /** Coarsest level announced and searched. */
  minLevel: number;
  /** Finest level announced and searched. */
  maxLevel: number;
  /** Only the first `maxDims` coordinate axes are used for cells. */
  maxDims: number;
  /** Levels used: maxLevel, maxLevel − step, … ≥ minLevel (each provide is a
   * DHT query, so fewer levels means cheaper announcements). */
  levelStep: number;
}

export const DEFAULT_CELLS: CellOptions = { span: 4096, minLevel: 2, maxLevel: 8, maxDims: 3, levelStep: 2 };

/** A cell with this many providers or more is dense: a router looks one level
 * finer (cell-lookup.ts's `denseAt`, router.ts's `denseCell`), and crawlers in
 * it announce the finer level too (announce.ts). */
export const DEFAULT_DENSE_CELL = 64;

/** The levels in use, finest first. */
export function levels(opts: CellOptions = DEFAULT_CELLS): number[] {
  const out: number[] = [];
  for (let l = opts.maxLevel; l >= opts.minLevel; l -= Math.max(1, opts.levelStep)) out.push(l);
  return out;
}

export interface Cell {
  level: number;
  dims: number;
  /** Integer index per axis in [0, 2^level). */
  index: number[];
  /** Morton code, hex. */
  code: string;
  /** DHT key. */
  cid: CID;
  /** Human-readable name, stable across processes. */
  name: string;
}

const RAW = 0x55;
const SHA2_256 = 0x12;

export function cellDims(c: CoordVec, opts: CellOptions = DEFAULT_CELLS): number {
  return Math.max(1, Math.min(c.vec.length, opts.maxDims));
}

function axisIndex(x: number, level: number, opts: CellOptions): number {
  const n = 2 ** level;
  const v = Number.isFinite(x) ? x : 0;
  const t = Math.floor(((v + opts.span / 2) / opts.span) * n);
  return Math.min(n - 1, Math.max(0, t));
}

/** Morton code of per-axis indices at `level` (interleaving bits, most
 * significant first), as a hex string padded to the level's width. */
export function morton(index: number[], level: number): string {
  const dims = index.length;
  let bits = '';
  for (let b = level - 1; b >= 0; b--) {
    for (let a = 0; a < dims; a++) bits += ((index[a]! >>> b) & 1).toString();
  }
  if (bits.length === 0) return '0';
  let hex = '';
  const padded = bits.padStart(Math.ceil(bits.length / 4) * 4, '0');
  for (let i = 0; i < padded.length; i += 4) hex += parseInt(padded.slice(i, i + 4), 2).toString(16);
  return hex;
}

export function cellFromIndex(index: number[], level: number): Cell {
  const dims = index.length;
  const code = morton(index, level);
  const name = `volcrawl/cell/v1/${dims}/${level}/${code}`;
  return { level, dims, index, code, name, cid: keyCid(name) };
}

/** A CID (raw, sha2-256) for an arbitrary string key. */
export function keyCid(name: string): CID {
  const hash = createHash('sha256').update(name).digest();
  return CID.createV1(RAW, Digest.create(SHA2_256, new Uint8Array(hash)));
}

/** Per-axis indices of the cell containing `c` at `level`. */
export function cellIndex(c: CoordVec, level: number, opts: CellOptions = DEFAULT_CELLS): number[] {
  const dims = cellDims(c, opts);
  const index: number[] = [];
  for (let a = 0; a < dims; a++) index.push(axisIndex(c.vec[a] ?? 0, level, opts));
  return index;
}

/** The cell containing `c` at `level`. */
export function cellAt(c: CoordVec, level: number, opts: CellOptions = DEFAULT_CELLS): Cell {
  return cellFromIndex(cellIndex(c, level, opts), level);
}

/** The cells of a crawler at `c`: one per level, finest first (announce.ts
 * provides the coarsest of them, and finer ones in dense regions). */
export function announceCells(c: CoordVec, opts: CellOptions = DEFAULT_CELLS): Cell[] {
  return levels(opts).map((l) => cellAt(c, l, opts));
}

/** The 2^d block of cells at `level` nearest to `c`: the cell holding c plus,
 * on each axis, the neighbour on the side c is closer to. Searching the block
 * rather than the single cell keeps a host near a cell edge from missing the
 * crawlers just across it. */
export function blockAround(c: CoordVec, level: number, opts: CellOptions = DEFAULT_CELLS): Cell[] {
  return blockIndices(c, level, opts).map((idx) => cellFromIndex(idx, level));
}

/** Per-axis indices of the cells of blockAround (naming a cell — its Morton
 * code and DHT key — costs a hash; the simulator needs only which cell). */
export function blockIndices(c: CoordVec, level: number, opts: CellOptions = DEFAULT_CELLS): number[][] {
  const dims = cellDims(c, opts);
  const n = 2 ** level;
  const base: number[] = [];
  const step: number[] = [];
  for (let a = 0; a < dims; a++) {
    const x = c.vec[a] ?? 0;
    const i = axisIndex(x, level, opts);
    base.push(i);
    const frac = ((Number.isFinite(x) ? x : 0) + opts.span / 2) / opts.span * n - i;
    step.push(frac < 0.5 ? -1 : 1);
  }
  const seen = new Set<string>();
  const cells: number[][] = [];
  for (let mask = 0; mask < 1 << dims; mask++) {
    const idx = base.map((i, a) => (mask & (1 << a)) !== 0 ? i + step[a]! : i);
    if (idx.some((i) => i < 0 || i >= n)) continue;
    const key = idx.join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    cells.push(idx);
  }
  return cells;
}

/** Side of a cell at `level`, in ms. */
export function cellSide(level: number, opts: CellOptions = DEFAULT_CELLS): number {
  return opts.span / 2 ** level;
}

/** The DHT key for hash routing of a host whose coordinate is unknown. */
export function hostKey(hostname: string): CID {
  return keyCid(`volcrawl/host/v1/${hostname.toLowerCase()}`);
}

/** True if `c` lies inside `cell` grown by `margin` × its side on every axis
 * (hysteresis: a coordinate jittering on a cell edge keeps its cell). */
export function insideWithMargin(c: CoordVec, cell: Cell, margin: number, opts: CellOptions = DEFAULT_CELLS): boolean {
  const side = cellSide(cell.level, opts);
  for (let a = 0; a < cell.dims; a++) {
    const x = c.vec[a] ?? 0;
    const lo = -opts.span / 2 + cell.index[a]! * side;
    if (x < lo - margin * side || x > lo + side + margin * side) return false;
  }
  return true;
}

export function sameCells(a: Cell[], b: Cell[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((c, i) => c.name === b[i]!.name);
}
