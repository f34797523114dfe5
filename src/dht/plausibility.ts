// May a crawler announce itself in these cells?
//
// A crawler provides the DHT keys of the cells its coordinate lies in, one per
// level in use (cells.ts's announceCells), and keeps an old cell while its
// coordinate stays within a quarter cell of it (announce.ts's hysteresis).
// A crawler that announces more cells than that — to attract the tasks of
// hosts in regions it is not in — is caught two ways:
//
//  - against its claimed coordinate: every announced cell must be a cell of a
//    level in use, at most one per level, and contain the claim grown by the
//    hysteresis margin (`justifiedCells` lists them, so a DHT node storing a
//    provider record can check the key it was given, as it sees only keys);
//  - against its measured position (src/coords/plausibility.ts's
//    measuredPosition: where the RTTs that others timed to it place it):
//    every announced cell must lie within the margin plus the position's
//    uncertainty. This is what catches a false claim, since a claim is free
//    and a measured RTT cannot be shortened.
//
// Pure: no I/O; cell names and keys come from cells.ts.
import { cellFromIndex, cellSide, levels, DEFAULT_CELLS, type Cell, type CellOptions, type CoordVec } from './cells.js';

export interface AnnouncementOptions {
  cells: CellOptions;
  /** Hysteresis margin, in cell sides (announce.ts keeps a cell within 0.25). */
  margin: number;
}

export const DEFAULT_ANNOUNCEMENT: Readonly<AnnouncementOptions> = Object.freeze({ cells: DEFAULT_CELLS, margin: 0.25 });

/** Parses a cell name `volcrawl/cell/v1/<dims>/<level>/<morton hex>`; null when it is not one. */
export function parseCellName(name: string): Cell | null {
  const m = /^volcrawl\/cell\/v1\/(\d{1,2})\/(\d{1,2})\/([0-9a-f]{1,64})$/.exec(name);
  if (!m) return null;
  const dims = Number(m[1]);
  const level = Number(m[2]);
  const hex = m[3]!;
  if (dims < 1 || dims > 16 || level > 30) return null;
  const bits = [...hex].map((h) => parseInt(h, 16).toString(2).padStart(4, '0')).join('');
  const width = level * dims;
  if (width === 0 ? hex !== '0' : bits.length < width || /1/.test(bits.slice(0, bits.length - width))) return null;
  const body = bits.slice(bits.length - width);
  const index = new Array<number>(dims).fill(0);
  let pos = 0;
  for (let b = level - 1; b >= 0; b--) {
    for (let a = 0; a < dims; a++) index[a]! |= Number(body[pos++]) << b;
  }
  const cell = cellFromIndex(index, level);
  return cell.name === name ? cell : null;
}

/** `c` clamped into the cells' cube, as cells.ts does when it picks a cell
 * (a coordinate beyond the cube belongs to the edge cell). */
function clampToCube(c: CoordVec, opts: CellOptions): CoordVec {
  const h = opts.span / 2;
  return { vec: Array.from(c.vec, (x) => (Number.isFinite(x) ? Math.min(h, Math.max(-h, x)) : 0)) };
}

/**
 * How far (ms) `c` lies outside the box of `cell` on its worst axis (0
 * inside): the per-axis distance announce.ts's hysteresis uses
 * (insideWithMargin(c, cell, m) ⇔ distanceToCell(c, cell) ≤ m·side), after
 * clamping c into the cube.
 */
export function distanceToCell(c: CoordVec, cell: Cell, opts: CellOptions = DEFAULT_CELLS): number {
  const side = cellSide(cell.level, opts);
  const v = clampToCube(c, opts).vec;
  let worst = 0;
  for (let a = 0; a < cell.dims; a++) {
    const x = v[a] ?? 0;
    const lo = -opts.span / 2 + cell.index[a]! * side;
    worst = Math.max(worst, x < lo ? lo - x : x > lo + side ? x - lo - side : 0);
  }
  return worst;
}

/** Every cell a crawler at `c` may announce: per level in use, each cell whose
 * box grown by the margin contains c (the cell of c and, near an edge, its
 * neighbours across it). A storing DHT node checks a provider's key against
 * the keys (`cid`) of these. */
export function justifiedCells(c: CoordVec, options: Partial<AnnouncementOptions> = {}): Cell[] {
  const o = { ...DEFAULT_ANNOUNCEMENT, ...options };
  const dims = Math.max(1, Math.min(c.vec.length, o.cells.maxDims));
  const out: Cell[] = [];
  for (const level of levels(o.cells)) {
    const n = 2 ** level;
    const side = cellSide(level, o.cells);
    const ranges: number[][] = [];
    for (let a = 0; a < dims; a++) {
      const x = Number.isFinite(c.vec[a]) ? c.vec[a]! : 0;
      const lo = Math.max(0, Math.floor((x + o.cells.span / 2) / side - o.margin));
      const hi = Math.min(n - 1, Math.floor((x + o.cells.span / 2) / side + o.margin));
      const r: number[] = [];
      for (let i = Math.min(lo, n - 1); i <= Math.max(hi, 0); i++) r.push(i);
      ranges.push(r);
    }
    let combos: number[][] = [[]];
    for (const r of ranges) combos = combos.flatMap((p) => r.map((i) => [...p, i]));
    for (const idx of combos) out.push(cellFromIndex(idx, level));
  }
  return out;
}

export type AnnouncementProblem = 'not-a-cell' | 'level-not-used' | 'wrong-dimensions' | 'duplicate-level' | 'far-from-claim' | 'far-from-measured';

export interface AnnouncementCheck {
  verdict: 'justified' | 'unjustified';
  /** Each announced cell at fault, and why. */
  problems: { name: string; problem: AnnouncementProblem; distanceMs?: number }[];
  /** False when there was no measured position (only the claim was checked). */
  measured: boolean;
}

/**
 * Checks a crawler's announced cells (their names) against its claimed
 * coordinate and, when there is one, the position the RTTs others measured
 * put it at (`measured`, with its uncertainty in ms).
 */
export function checkAnnouncement(
  announced: readonly string[],
  claimed: CoordVec,
  measured: { coord: CoordVec; uncertaintyMs: number } | null,
  options: Partial<AnnouncementOptions> = {},
): AnnouncementCheck {
  const o = { ...DEFAULT_ANNOUNCEMENT, ...options };
  const used = new Set(levels(o.cells));
  const dims = Math.max(1, Math.min(claimed.vec.length, o.cells.maxDims));
  const seenLevels = new Set<number>();
  const problems: AnnouncementCheck['problems'] = [];
  for (const name of announced) {
    const cell = parseCellName(name);
    if (cell === null) {
      problems.push({ name, problem: 'not-a-cell' });
      continue;
    }
    if (!used.has(cell.level)) {
      problems.push({ name, problem: 'level-not-used' });
      continue;
    }
    if (cell.dims !== dims) {
      problems.push({ name, problem: 'wrong-dimensions' });
      continue;
    }
    if (seenLevels.has(cell.level)) problems.push({ name, problem: 'duplicate-level' });
    seenLevels.add(cell.level);
    const side = cellSide(cell.level, o.cells);
    const fromClaim = distanceToCell(claimed, cell, o.cells);
    if (fromClaim > o.margin * side) problems.push({ name, problem: 'far-from-claim', distanceMs: fromClaim });
    if (measured !== null) {
      const fromMeasured = distanceToCell(measured.coord, cell, o.cells);
      if (fromMeasured > o.margin * side + measured.uncertaintyMs) problems.push({ name, problem: 'far-from-measured', distanceMs: fromMeasured });
    }
  }
  return { verdict: problems.length === 0 ? 'justified' : 'unjustified', problems, measured: measured !== null };
}
