// Formula (5), the update quality: src/recrawl/quality.ts, shared by the
// simulator and the manager's reporting service.
import { describe, expect, it } from 'vitest';
import { groupWeights, updateQuality, UpdateQualitySum } from '../../src/recrawl/quality.js';

describe('update quality (formula 5)', () => {
  it("weights groups 16, 8, 4, 2, 1 with K = 5 (the paper's weights)", () => {
    expect(groupWeights(5)).toEqual([16, 8, 4, 2, 1]);
    expect(groupWeights(1)).toEqual([1]);
  });

  it('is Σ R_i × λ_actual/λ_expected over the measured channels, / N', () => {
    // group 0: updated at its change rate (ratio 1) and at half of it (0.5); group 2: twice (2);
    // group 4: one channel never measured (null: left out of N).
    const r = updateQuality(
      [
        { group: 0, actualRate: 1 / 60, changeInterval: 60 },
        { group: 0, actualRate: 1 / 120, changeInterval: 60 },
        { group: 2, actualRate: 2 / 240, changeInterval: 240 },
        { group: 4, actualRate: null, changeInterval: 960 },
      ],
      5,
    );
    expect(r.weighted).toBeCloseTo((16 * 1 + 16 * 0.5 + 4 * 2) / 3, 12);
    expect(r.unweighted).toBeCloseTo((1 + 0.5 + 2) / 3, 12);
    expect(r.groups.map((g) => [g.channels, g.measured, g.quality])).toEqual([
      [2, 2, 0.75],
      [0, 0, null],
      [1, 1, 2],
      [0, 0, null],
      [1, 0, null],
    ]);
    expect(r.groups.map((g) => g.weight)).toEqual([16, 8, 4, 2, 1]);
  });

  it('counts an unserved channel (rate 0) in N, and reports null when nothing was measured', () => {
    const q = new UpdateQualitySum(2);
    q.add(0, 0, 10);
    q.add(1, 0.1, 10);
    expect(q.result()).toMatchObject({ weighted: (2 * 0 + 1 * 1) / 2, unweighted: 0.5 });
    expect(updateQuality([{ group: 1, actualRate: null, changeInterval: 5 }], 2)).toMatchObject({ weighted: null, unweighted: null });
  });

  it('refuses inputs that would make a figure meaningless', () => {
    const q = new UpdateQualitySum(5);
    expect(() => new UpdateQualitySum(0)).toThrow(RangeError);
    expect(() => new UpdateQualitySum(2.5)).toThrow(RangeError);
    expect(() => q.add(5, 1, 1)).toThrow(/group must be an integer in 0..4/);
    expect(() => q.add(-1, 1, 1)).toThrow(RangeError);
    expect(() => q.add(0, 1, 0)).toThrow(/change interval must be finite and > 0/);
    expect(() => q.add(0, 1, Infinity)).toThrow(RangeError);
    expect(() => q.add(0, -1, 10)).toThrow(/actual rate must be finite and ≥ 0 or null/);
    expect(() => q.add(0, NaN, 10)).toThrow(RangeError);
    expect(q.result()).toMatchObject({ weighted: null, groups: [{ channels: 0 }, {}, {}, {}, {}] }); // the refused calls added nothing
  });
});
