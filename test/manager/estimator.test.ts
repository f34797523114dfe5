import { describe, expect, it } from 'vitest';
import {
  changeIntervalOf,
  chooseGroup,
  estimateChangeRate,
  estimateIrregular,
  estimateRegular,
  groupEdges,
  nearestGroup,
} from '../../src/manager/domain/estimator.js';

const IV = [60, 120, 240, 480, 960];

describe('change-rate estimator (Cho & Garcia-Molina)', () => {
  it('regular visits: r = -log((n - X + 0.5) / (n + 0.5)) / I', () => {
    // n = 10, X = 5 changed, I = 1: ln(10.5 / 5.5) = 0.646627
    expect(estimateRegular(10, 5, 1)).toBeCloseTo(Math.log(10.5 / 5.5), 12);
    expect(estimateRegular(10, 5, 1)).toBeCloseTo(0.646627, 5);
    // no change seen: 0; every visit changed: finite, ln(21) / I
    expect(estimateRegular(10, 0, 2)).toBe(0);
    expect(estimateRegular(10, 10, 1)).toBeCloseTo(Math.log(21), 12);
    expect(() => estimateRegular(3, 4, 1)).toThrow(RangeError);
    expect(() => estimateRegular(3, 1, 0)).toThrow(RangeError);
  });

  it('accounts for missed changes: more than the naive X / (n I)', () => {
    // 8 of 10 visits 60 min apart saw a change: naive 8/600 = 0.0133/min
    const r = estimateRegular(10, 8, 60);
    expect(r).toBeCloseTo(Math.log(10.5 / 2.5) / 60, 12);
    expect(r).toBeGreaterThan(8 / 600);
  });

  it('irregular MLE reduces to the regular estimator for equal intervals', () => {
    const obs = [
      { interval: 2, revisited: 4, changed: 1 },
      { interval: 2, revisited: 6, changed: 4 },
    ];
    // n = 10, X = 5, I = 2
    expect(estimateIrregular(obs)!).toBeCloseTo(Math.log(10.5 / 5.5) / 2, 9);
    expect(estimateChangeRate(obs)!).toBeCloseTo(Math.log(10.5 / 5.5) / 2, 12);
  });

  it('irregular MLE: hand-solved case', () => {
    // one change seen after t = 1, none after t = 2; pseudo-count 0.5 × mean t (1.5):
    // 1 / (e^r − 1) = 2 + 0.75  →  r = ln(1 + 1 / 2.75) = 0.310155
    const obs = [
      { interval: 1, revisited: 1, changed: 1 },
      { interval: 2, revisited: 1, changed: 0 },
    ];
    expect(estimateIrregular(obs)!).toBeCloseTo(Math.log(1 + 1 / 2.75), 9);
    expect(estimateChangeRate(obs)!).toBeCloseTo(0.310155, 5);
  });

  it('no evidence: null; no change: 0', () => {
    expect(estimateChangeRate([])).toBeNull();
    expect(estimateChangeRate([{ interval: 5, revisited: 0, changed: 0 }])).toBeNull();
    expect(estimateIrregular([{ interval: 5, revisited: 3, changed: 0 }, { interval: 9, revisited: 3, changed: 0 }])).toBe(0);
  });
});

describe('priority groups with hysteresis', () => {
  it('band edges are geometric midpoints', () => {
    const e = groupEdges(IV);
    expect(e[0]).toBeCloseTo(Math.sqrt(60 * 120), 9); // 84.85
    expect(e[3]).toBeCloseTo(Math.sqrt(480 * 960), 9); // 678.8
    expect(nearestGroup(50, IV)).toBe(0);
    expect(nearestGroup(180, IV)).toBe(2);
    expect(nearestGroup(5000, IV)).toBe(4);
  });

  it('moves only with enough visits and clearly outside the band', () => {
    // group 2 band: 169.7 .. 339.4 min
    expect(chooseGroup(2, 180, 5, IV)).toBe(2);
    expect(chooseGroup(2, 160, 5, IV)).toBe(2); // 160 × 1.25 = 200 > 169.7: inside the hysteresis margin
    expect(chooseGroup(2, 130, 5, IV)).toBe(1); // 162.5 < 169.7: moves up
    expect(chooseGroup(2, 130, 2, IV)).toBe(2); // too few visits
    expect(chooseGroup(2, 400, 5, IV)).toBe(2); // 400 < 339.4 × 1.25 = 424.3
    expect(chooseGroup(2, 430, 5, IV)).toBe(3);
    expect(chooseGroup(2, 30, 5, IV)).toBe(0); // jumps straight to the nearest group
    expect(chooseGroup(4, 5000, 9, IV)).toBe(4);
  });

  it('a change interval for src/recrawl: finite and > 0', () => {
    expect(changeIntervalOf(null, 240, IV)).toBe(240);
    expect(changeIntervalOf(0, 240, IV)).toBe(1920);
    expect(changeIntervalOf(1 / 100, 240, IV)).toBeCloseTo(100, 9);
    expect(changeIntervalOf(1e-9, 240, IV)).toBe(1920);
  });
});
