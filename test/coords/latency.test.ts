import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_LATENCY_PATH,
  LatencyParseError,
  detectLatencyFormat,
  loadDefaultLatency,
  loadLatencyFile,
  parseE2EGraph,
  parseKingMatrix,
  parseMsMatrix,
  rttOf,
  validPairCount,
} from '../../src/coords/index.js';

const fx = (name: string): string => fileURLToPath(new URL(`../fixtures/latency/${name}`, import.meta.url));

function expectParseError(fn: () => unknown, line: number, reason: RegExp, file?: string): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(LatencyParseError);
  const pe = err as LatencyParseError;
  expect(pe.line).toBe(line);
  expect(pe.message).toMatch(reason);
  expect(pe.message).toContain(`:${line}:`);
  if (file) expect(pe.message).toContain(file);
}

describe('King matrix (µs)', () => {
  it('parses, converts to ms, treats <= 0 off the diagonal as missing and folds asymmetry', () => {
    const m = loadLatencyFile(fx('king-matrix-good'));
    expect(m.format).toBe('king-matrix');
    expect(m.n).toBe(4);
    expect(rttOf(m, 0, 1)).toBeCloseTo(21, 10); // mean of 20 and 22 ms
    expect(rttOf(m, 1, 0)).toBeCloseTo(21, 10);
    expect(rttOf(m, 0, 2)).toBeNaN(); // -1 both ways
    expect(rttOf(m, 1, 3)).toBeCloseTo(50, 10); // only one direction present
    expect(rttOf(m, 3, 1)).toBeCloseTo(50, 10);
    expect(rttOf(m, 2, 3)).toBeNaN(); // 0 off the diagonal
    expect(rttOf(m, 2, 2)).toBe(0);
    expect(validPairCount(m)).toBe(4);
  });
  it('reports wrong column count with file and line', () => {
    expectParseError(() => loadLatencyFile(fx('king-matrix-bad-columns')), 2, /wrong column count: expected 3, got 4/, 'king-matrix-bad-columns');
  });
  it('reports non-numeric values', () => {
    expectParseError(() => loadLatencyFile(fx('king-matrix-bad-nonnumeric'), 'king-matrix'), 2, /non-numeric value 'abc' in column 3/);
  });
  it('reports a non-square matrix (too few rows / extra row)', () => {
    expectParseError(() => loadLatencyFile(fx('king-matrix-bad-nonsquare'), 'king-matrix'), 2, /too few rows: expected 3/);
    expectParseError(() => loadLatencyFile(fx('king-matrix-bad-extra-row'), 'king-matrix'), 3, /extra row/);
  });
  it('reports an empty file', () => {
    expectParseError(() => loadLatencyFile(fx('empty')), 1, /empty file/, 'empty');
    expectParseError(() => parseKingMatrix('\n\n  \n', 'blank'), 1, /empty file/);
  });
  it('refuses more than 20 000 nodes', () => {
    const row = Array.from({ length: 20_001 }, () => '1000').join(' ');
    expectParseError(() => parseKingMatrix(row, 'huge'), 1, /20001 nodes exceeds the limit of 20000/);
  });
});

describe('E2EGraph topology (uking-t)', () => {
  it('parses header, failure_model, node lines and directed µs edges', () => {
    const m = loadLatencyFile(fx('uking-t-good'));
    expect(m.format).toBe('e2egraph');
    expect(m.n).toBe(4);
    expect(rttOf(m, 0, 1)).toBeCloseTo(21, 10);
    expect(rttOf(m, 0, 2)).toBeNaN();
    expect(rttOf(m, 1, 2)).toBeCloseTo(30, 10);
    expect(rttOf(m, 0, 3)).toBeCloseTo(41, 10);
    expect(rttOf(m, 2, 3)).toBeCloseTo(12, 10);
    expect(rttOf(m, 1, 3)).toBeNaN();
    expect(validPairCount(m)).toBe(4);
  });
  it('rejects a bad header', () => {
    expectParseError(() => loadLatencyFile(fx('uking-t-bad-header'), 'e2egraph'), 1, /bad header/, 'uking-t-bad-header');
  });
  it('rejects an id out of range', () => {
    expectParseError(() => loadLatencyFile(fx('uking-t-bad-id')), 6, /node id 4 out of range 1\.\.3/);
  });
  it('rejects a non-numeric latency and an unrecognised line', () => {
    expectParseError(() => loadLatencyFile(fx('uking-t-bad-latency')), 6, /non-numeric latency 'fast'/);
    expectParseError(() => loadLatencyFile(fx('uking-t-bad-line'), 'e2egraph'), 5, /unrecognised line/);
  });
  it('refuses more than 20 000 nodes before allocating', () => {
    expectParseError(() => loadLatencyFile(fx('uking-t-too-many')), 1, /exceeds the limit/);
  });
  it('counts lines with comments and blank lines', () => {
    expectParseError(() => parseE2EGraph('# c\n\ntopology E2EGraph 2\n\nnode 0\n', 't'), 5, /node id 0 out of range/);
  });
});

describe('plain ms matrix and detection', () => {
  it('parses tab-separated decimals in ms', () => {
    const m = loadLatencyFile(fx('ms-matrix-good'));
    expect(m.format).toBe('ms-matrix');
    expect(rttOf(m, 0, 2)).toBeCloseTo(30.25, 12);
    expect(validPairCount(m)).toBe(3);
  });
  it('detects formats', () => {
    expect(detectLatencyFormat('topology E2EGraph 2\n')).toBe('e2egraph');
    expect(detectLatencyFormat('0 1.5\n1.5 0\n')).toBe('ms-matrix');
    expect(detectLatencyFormat('0 15\n15 0\n')).toBe('ms-matrix');
    expect(detectLatencyFormat('0 15000\n15000 0\n')).toBe('king-matrix');
  });
  it('parseMsMatrix rejects a wrong column count on the right line', () => {
    expectParseError(() => parseMsMatrix('0 1\n1 0 3\n', 'x'), 2, /wrong column count/);
  });
  it('loads the shipped PlanetLab default', () => {
    expect(DEFAULT_LATENCY_PATH).toMatch(/data\/latency\/planetlab490\/PlanetLabData_1$/);
    const m = loadDefaultLatency();
    expect(m.n).toBe(490);
    expect(validPairCount(m)).toBe(119_805);
    expect(rttOf(m, 0, 1)).toBeCloseTo(0.175, 9);
  });
});
