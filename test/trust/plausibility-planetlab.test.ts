// The coordinate-claim check on real latencies: the shipped PlanetLab matrix
// (490 nodes), embedded with the live Vivaldi defaults (2D + height). Every
// node's true claim is checked against eight random measurers (the honest
// false-positive rate), and a lie — the coordinate of another node at least
// 50 ms away — against the four nodes nearest the claimed position and four
// random ones (the detection rate). These rates set the defaults of
// src/coords/plausibility.ts; docs/trust.md quotes them.
import { describe, expect, it } from 'vitest';
import { createRng, randomInt } from '../../src/rng.js';
import { checkCoordinateClaim, loadDefaultLatency, MatrixEmbedding, predictRtt, rttOf, vivaldiOptions } from '../../src/coords/index.js';

describe('coordinate claims on PlanetLab', () => {
  it('flags under 2 % of honest claims and over 80 % of claims 50 ms or more from the truth', () => {
    const m = loadDefaultLatency();
    const emb = new MatrixEmbedding(m, { options: vivaldiOptions({ dimensions: 2, height: true }), seed: 1 });
    emb.run(2000);
    const coords = emb.coords();
    const rng = createRng(11);
    const valid = (i: number, j: number): boolean => rttOf(m, i, j) > 0;
    const obsFrom = (i: number, js: number[]) => js.map((j) => ({ measurer: String(j), coord: coords[j]!, rttMs: rttOf(m, i, j) }));
    let honest = 0;
    let honestFlagged = 0;
    let liars = 0;
    let liarsFlagged = 0;
    for (let i = 0; i < m.n; i++) {
      const random: number[] = [];
      while (random.length < 8) {
        const j = randomInt(rng, m.n);
        if (j !== i && valid(i, j) && !random.includes(j)) random.push(j);
      }
      const h = checkCoordinateClaim(coords[i]!, obsFrom(i, random));
      if (h.verdict === 'consistent' || h.verdict === 'inconsistent') {
        honest++;
        if (h.verdict === 'inconsistent') honestFlagged++;
      }
      let t: number;
      do t = randomInt(rng, m.n);
      while (t === i || !valid(i, t) || rttOf(m, i, t) < 50);
      const claim = { ...coords[t]!, error: coords[i]!.error };
      const near = Array.from({ length: m.n }, (_, j) => j)
        .filter((j) => j !== i && valid(i, j))
        .sort((a, b) => predictRtt(coords[a]!, claim) - predictRtt(coords[b]!, claim))
        .slice(0, 4);
      const l = checkCoordinateClaim(claim, obsFrom(i, [...near, ...random.filter((j) => !near.includes(j)).slice(0, 4)]));
      if (l.verdict === 'consistent' || l.verdict === 'inconsistent') {
        liars++;
        if (l.verdict === 'inconsistent') liarsFlagged++;
      }
    }
    expect(honest).toBeGreaterThan(400); // nodes whose own error estimate is ≤ 0.5
    expect(honestFlagged / honest).toBeLessThan(0.02);
    expect(liarsFlagged / liars).toBeGreaterThan(0.8);
  });
});
