import { describe, expect, it } from 'vitest';
import { lossStandsOut } from '../../src/manager/trust/loss.js';
import { binomialTail } from '../../src/manager/trust/stats.js';

describe('lossStandsOut: a volunteer losing its tasks while the others do not', () => {
  it('matches the binomial tail it is computed as', () => {
    const t = lossStandsOut(4, 10, 29, 298);
    expect(t.baseRate).toBeCloseTo(0.1, 12);
    expect(t.pValue).toBeCloseTo(binomialTail(10, 0.1, 4), 10);
  });
  it('on a quiet network (others lose 5 %): three lost of three stand out, three of thirty do not', () => {
    expect(lossStandsOut(3, 3, 49, 998).standsOut).toBe(true);
    expect(lossStandsOut(3, 30, 49, 998).standsOut).toBe(false);
    expect(lossStandsOut(2, 2, 49, 998).standsOut).toBe(false); // below minLost
  });
  it('on an overloaded one (others lose 70 %): only a long run of losses stands out', () => {
    expect(lossStandsOut(10, 10, 699, 998).standsOut).toBe(false);
    expect(lossStandsOut(15, 20, 699, 998).standsOut).toBe(false); // an honest volunteer's bad luck
    expect(lossStandsOut(25, 25, 699, 998).standsOut).toBe(true);
  });
  it('no lost task, or no others: nothing to say', () => {
    expect(lossStandsOut(0, 10, 0, 0).pValue).toBe(1);
    expect(lossStandsOut(3, 3, 0, 0).standsOut).toBe(false); // the prior alone (rate 0.5) explains it
  });
});
