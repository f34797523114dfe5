// Latency matrices: the shipped PlanetLab matrix (ms) and the p2psim King
// formats (µs). Missing pairs are NaN and are never sampled or scored.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface LatencyMatrix {
  /** Number of nodes. */
  n: number;
  /** n*n RTTs in ms, row-major; symmetric; 0 on the diagonal; NaN = missing. */
  rtt: Float64Array;
  /** Where it came from (a path or a label). */
  source: string;
  /** The format it was parsed from, when loaded from text. */
  format?: LatencyFormat;
}

export type LatencyFormat = 'ms-matrix' | 'king-matrix' | 'e2egraph';

/** Inputs above this many nodes are refused (the matrix alone would be > 3 GB). */
export const MAX_LATENCY_NODES = 20_000;
/** Files above this size are refused before reading (V8 strings stop at ~512 MiB). */
export const MAX_LATENCY_FILE_BYTES = 512 * 1024 * 1024;

/** Absolute path of the shipped default: 490 PlanetLab nodes, ms. */
export const DEFAULT_LATENCY_PATH: string = fileURLToPath(
  new URL('../../data/latency/planetlab490/PlanetLabData_1', import.meta.url),
);

export class LatencyParseError extends Error {
  constructor(
    readonly source: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${source}:${line}: ${reason}`);
    this.name = 'LatencyParseError';
  }
}

/**
 * Folds a directed n*n matrix (NaN = missing) into a symmetric one, in place:
 * the mean of (i,j) and (j,i) when both are present, the one present otherwise,
 * NaN when neither. The diagonal is set to 0.
 */
export function symmetrize(raw: Float64Array, n: number): Float64Array {
  for (let i = 0; i < n; i++) {
    raw[i * n + i] = 0;
    for (let j = i + 1; j < n; j++) {
      const a = raw[i * n + j]!;
      const b = raw[j * n + i]!;
      let v: number;
      if (a === a && b === b) v = 0.5 * (a + b);
      else if (a === a) v = a;
      else v = b;
      raw[i * n + j] = v;
      raw[j * n + i] = v;
    }
  }
  return raw;
}

function tooMany(source: string, line: number, n: number): LatencyParseError {
  return new LatencyParseError(source, line, `${n} nodes exceeds the limit of ${MAX_LATENCY_NODES}`);
}

interface TextLine {
  no: number;
  text: string;
}

/** Non-blank, non-comment ('#') lines with their 1-based line numbers. */
function* dataLines(text: string): Generator<TextLine> {
  let start = 0;
  let no = 0;
  const len = text.length;
  while (start <= len) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = len;
    no++;
    let line = text.slice(start, end);
    if (line.endsWith('\r')) line = line.slice(0, -1);
    const t = line.trim();
    if (t !== '' && !t.startsWith('#')) yield { no, text: t };
    start = end + 1;
  }
}

function lastLineNo(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < text.length - 1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Square whitespace-separated matrix; `scale` converts file units to ms. */
function parseSquare(text: string, source: string, scale: number, format: LatencyFormat): LatencyMatrix {
  let n = -1;
  let row = 0;
  let raw = new Float64Array(0);
  for (const { no, text: line } of dataLines(text)) {
    const toks = line.split(/\s+/);
    if (n < 0) {
      n = toks.length;
      if (n > MAX_LATENCY_NODES) throw tooMany(source, no, n);
      raw = new Float64Array(n * n);
    }
    if (row >= n) throw new LatencyParseError(source, no, `extra row: the matrix has ${n} columns, so it must have ${n} rows (not square)`);
    if (toks.length !== n) throw new LatencyParseError(source, no, `wrong column count: expected ${n}, got ${toks.length}`);
    for (let j = 0; j < n; j++) {
      const tok = toks[j]!;
      if (!NUMBER_RE.test(tok)) throw new LatencyParseError(source, no, `non-numeric value '${tok.slice(0, 32)}' in column ${j + 1}`);
      const v = Number(tok);
      // Off the diagonal, a value <= 0 means "not measured".
      raw[row * n + j] = row !== j && v > 0 ? v * scale : row === j ? 0 : NaN;
    }
    row++;
  }
  if (n < 0) throw new LatencyParseError(source, 1, 'empty file: no matrix rows');
  if (row < n) throw new LatencyParseError(source, lastLineNo(text), `too few rows: expected ${n} (square, ${n} columns), got ${row}`);
  return { n, rtt: symmetrize(raw, n), source, format };
}

/** Plain whitespace-separated square matrix, RTT in ms (the shipped default). */
export function parseMsMatrix(text: string, source = '<ms-matrix>'): LatencyMatrix {
  return parseSquare(text, source, 1, 'ms-matrix');
}

/** p2psim King `matrix`: RTT in µs, any value <= 0 off the diagonal = missing. */
export function parseKingMatrix(text: string, source = '<king-matrix>'): LatencyMatrix {
  return parseSquare(text, source, 1e-3, 'king-matrix');
}

const HEADER_RE = /^topology\s+E2EGraph\s+(\S+)$/;
const EDGE_RE = /^(\S+?),(\S+)\s+(\S+)$/;
const INT_RE = /^\d+$/;

/**
 * p2psim E2EGraph topology (`uking-t`, `mking-t`): `topology E2EGraph N`, an
 * optional `failure_model ...` line, `node <id>` lines (ids 1..N) and
 * `<i>,<j> <latency µs>` lines; a latency <= 0 is missing. Repeated (i,j) lines:
 * the last one wins.
 */
export function parseE2EGraph(text: string, source = '<e2egraph>'): LatencyMatrix {
  let n = -1;
  let raw = new Float64Array(0);
  const id = (tok: string, no: number): number => {
    if (!INT_RE.test(tok)) throw new LatencyParseError(source, no, `node id '${tok.slice(0, 32)}' is not a positive integer`);
    const v = Number(tok);
    if (v < 1 || v > n) throw new LatencyParseError(source, no, `node id ${v} out of range 1..${n}`);
    return v - 1;
  };
  for (const { no, text: line } of dataLines(text)) {
    if (n < 0) {
      const m = HEADER_RE.exec(line);
      if (!m) throw new LatencyParseError(source, no, `bad header: expected 'topology E2EGraph <N>', got '${line.slice(0, 60)}'`);
      const cnt = m[1]!;
      if (!INT_RE.test(cnt) || Number(cnt) < 1) throw new LatencyParseError(source, no, `bad header: node count '${cnt}' is not a positive integer`);
      n = Number(cnt);
      if (n > MAX_LATENCY_NODES) throw tooMany(source, no, n);
      raw = new Float64Array(n * n).fill(NaN);
      continue;
    }
    if (line.startsWith('failure_model')) continue;
    if (line.startsWith('node')) {
      const toks = line.split(/\s+/);
      if (toks[0] !== 'node' || toks.length !== 2) throw new LatencyParseError(source, no, `bad node line: expected 'node <id>'`);
      id(toks[1]!, no);
      continue;
    }
    const m = EDGE_RE.exec(line);
    if (!m) throw new LatencyParseError(source, no, `unrecognised line: expected '<i>,<j> <latency>', 'node <id>' or 'failure_model ...', got '${line.slice(0, 60)}'`);
    const i = id(m[1]!, no);
    const j = id(m[2]!, no);
    const lat = m[3]!;
    if (!NUMBER_RE.test(lat)) throw new LatencyParseError(source, no, `non-numeric latency '${lat.slice(0, 32)}'`);
    const v = Number(lat);
    if (i !== j) raw[i * n + j] = v > 0 ? v * 1e-3 : NaN;
  }
  if (n < 0) throw new LatencyParseError(source, 1, `empty file: expected 'topology E2EGraph <N>'`);
  return { n, rtt: symmetrize(raw, n), source, format: 'e2egraph' };
}

/**
 * Guesses the format: a `topology` header means E2EGraph; a matrix whose
 * first rows are all integers with a median positive value >= 1000 is King
 * (µs); anything else is a plain ms matrix.
 */
export function detectLatencyFormat(text: string): LatencyFormat {
  let rows = 0;
  const positives: number[] = [];
  for (const { text: line } of dataLines(text)) {
    if (rows === 0 && line.startsWith('topology')) return 'e2egraph';
    for (const tok of line.split(/\s+/)) {
      if (!/^-?\d+$/.test(tok)) return 'ms-matrix';
      const v = Number(tok);
      if (v > 0) positives.push(v);
    }
    if (++rows >= 8) break;
  }
  if (positives.length === 0) return 'ms-matrix';
  positives.sort((a, b) => a - b);
  return positives[positives.length >> 1]! >= 1000 ? 'king-matrix' : 'ms-matrix';
}

export function parseLatencyText(text: string, source: string, format?: LatencyFormat): LatencyMatrix {
  const f = format ?? detectLatencyFormat(text);
  switch (f) {
    case 'e2egraph':
      return parseE2EGraph(text, source);
    case 'king-matrix':
      return parseKingMatrix(text, source);
    case 'ms-matrix':
      return parseMsMatrix(text, source);
    default:
      throw new RangeError(`unknown latency format '${String(f)}'`);
  }
}

/** Reads and parses a latency file, detecting the format unless given. */
export function loadLatencyFile(path: string, format?: LatencyFormat): LatencyMatrix {
  const size = statSync(path).size;
  if (size > MAX_LATENCY_FILE_BYTES) {
    throw new RangeError(`${path}: file is ${size} bytes, above the ${MAX_LATENCY_FILE_BYTES}-byte limit for latency data`);
  }
  return parseLatencyText(readFileSync(path, 'utf8'), path, format);
}

export function loadDefaultLatency(): LatencyMatrix {
  return loadLatencyFile(DEFAULT_LATENCY_PATH, 'ms-matrix');
}

/** RTT in ms between i and j, NaN when missing. */
export function rttOf(m: LatencyMatrix, i: number, j: number): number {
  return m.rtt[i * m.n + j]!;
}

/** Number of unordered pairs i < j with a valid RTT. */
export function validPairCount(m: LatencyMatrix): number {
  let c = 0;
  const { n, rtt } = m;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (rtt[i * n + j]! > 0) c++;
  return c;
}
