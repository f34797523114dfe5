// Vivaldi options: defaults for live nodes (every guard on) and a "faithful"
// preset that turns the guards off to reproduce Dabek et al. (SIGCOMM 2004).

import { mergeOptions, optionChecker } from '../options.js';

export interface VivaldiOptions {
  /** Euclidean dimensions of the coordinate (1..64). */
  dimensions: number;
  /** Add a height (the paper's height-vector model): rtt = ‖xi − xj‖ + hi + hj. */
  height: boolean;
  /** Timestep constant cc of the adaptive timestep δ = cc·w, in (0, 1]. */
  cc: number;
  /** Error-moving-average constant ce, in (0, 1]. */
  ce: number;
  /** Error estimate of a fresh (or reset) node; > 0. */
  initialError: number;
  /** Cap on the error estimate (guard); Infinity = off. */
  maxError: number;
  /** Reject RTT samples above this (guard); Infinity = off. */
  maxRttMs: number;
  /** Reject non-finite / non-positive RTTs and non-finite remote coordinates (guard). */
  validateInput: boolean;
  /** Floor on the height in ms (guard); 0 = off (a height is never negative). */
  minHeightMs: number;
  /** Height of a fresh (or reset) node, in ms (≥ minHeightMs). Heights only grow
   * from a positive start, so this must be > 0 when height is on. */
  initialHeightMs: number;
  /** Per-peer moving median over the last k samples (guard); 0 = off. */
  latencyFilterSize: number;
  /** How many peers the latency filter remembers (oldest forgotten first). */
  latencyFilterPeers: number;
  /** Gravity toward the origin, force (‖x‖/ρ)², ρ in ms (guard); 0 = off. */
  gravityRho: number;
  /** Reset to the origin when the state turns NaN/∞ (guard). */
  resetOnNonFinite: boolean;
}

export const DEFAULT_VIVALDI_OPTIONS: Readonly<VivaldiOptions> = Object.freeze({
  dimensions: 2,
  height: true,
  cc: 0.25,
  ce: 0.25,
  initialError: 1.5,
  maxError: 1.5,
  maxRttMs: 10_000,
  validateInput: true,
  minHeightMs: 0.01,
  initialHeightMs: 1,
  latencyFilterSize: 3,
  latencyFilterPeers: 4096,
  gravityRho: 150,
  resetOnNonFinite: true,
});

/** Every guard off: the algorithm as published. Combine with a dimension:
 * `vivaldiOptions({ ...FAITHFUL_VIVALDI, dimensions: 5, height: false })`. */
export const FAITHFUL_VIVALDI: Readonly<Partial<VivaldiOptions>> = Object.freeze({
  initialError: 1,
  maxError: Infinity,
  maxRttMs: Infinity,
  validateInput: false,
  minHeightMs: 0,
  latencyFilterSize: 0,
  gravityRho: 0,
  resetOnNonFinite: false,
});

const check = optionChecker('vivaldiOptions');

/** Defaults merged with `partial`, validated; throws RangeError naming the bad option. */
export function vivaldiOptions(partial: Partial<VivaldiOptions> = {}): VivaldiOptions {
  const o = mergeOptions('vivaldiOptions', DEFAULT_VIVALDI_OPTIONS, partial);
  check(Number.isInteger(o.dimensions) && o.dimensions >= 1 && o.dimensions <= 64,
    `dimensions must be an integer in 1..64, got ${o.dimensions}`);
  check(typeof o.height === 'boolean', `height must be a boolean, got ${String(o.height)}`);
  check(Number.isFinite(o.cc) && o.cc > 0 && o.cc <= 1, `cc must be in (0, 1], got ${o.cc}`);
  check(Number.isFinite(o.ce) && o.ce > 0 && o.ce <= 1, `ce must be in (0, 1], got ${o.ce}`);
  check(!Number.isNaN(o.maxError) && o.maxError > 0, `maxError must be > 0 (Infinity = off), got ${o.maxError}`);
  check(Number.isFinite(o.initialError) && o.initialError > 0,
    `initialError must be a finite number > 0, got ${o.initialError}`);
  check(o.initialError <= o.maxError, `initialError (${o.initialError}) must not exceed maxError (${o.maxError})`);
  check(!Number.isNaN(o.maxRttMs) && o.maxRttMs > 0, `maxRttMs must be > 0 (Infinity = off), got ${o.maxRttMs}`);
  check(typeof o.validateInput === 'boolean', `validateInput must be a boolean`);
  check(Number.isFinite(o.minHeightMs) && o.minHeightMs >= 0, `minHeightMs must be a finite number >= 0, got ${o.minHeightMs}`);
  check(Number.isFinite(o.initialHeightMs) && o.initialHeightMs >= o.minHeightMs,
    `initialHeightMs must be finite and >= minHeightMs (${o.minHeightMs}), got ${o.initialHeightMs}`);
  check(!o.height || o.initialHeightMs > 0, `initialHeightMs must be > 0 when height is on (a zero height never grows)`);
  check(Number.isInteger(o.latencyFilterSize) && o.latencyFilterSize >= 0 && o.latencyFilterSize <= 64,
    `latencyFilterSize must be an integer in 0..64 (0 = off), got ${o.latencyFilterSize}`);
  check(Number.isInteger(o.latencyFilterPeers) && o.latencyFilterPeers >= 1,
    `latencyFilterPeers must be an integer >= 1, got ${o.latencyFilterPeers}`);
  check(Number.isFinite(o.gravityRho) && o.gravityRho >= 0, `gravityRho must be a finite number >= 0 (0 = off), got ${o.gravityRho}`);
  check(typeof o.resetOnNonFinite === 'boolean', `resetOnNonFinite must be a boolean`);
  return o;
}

/** The faithful preset merged with `partial`. */
export function faithfulVivaldiOptions(partial: Partial<VivaldiOptions> = {}): VivaldiOptions {
  return vivaldiOptions({ ...FAITHFUL_VIVALDI, ...partial });
}
