// Regression on the shipped PlanetLab matrix: the faithful 2D+height embedding
// and host placement from 16 landmarks on top of it.
import { describe, expect, it } from 'vitest';
import { createRng } from '../../src/rng.js';
import {
  MatrixEmbedding,
  embeddingError,
  faithfulVivaldiOptions,
  loadDefaultLatency,
  nodeMedianError,
  placeHost,
  quantileSorted,
  rttOf,
} from '../../src/coords/index.js';

describe('PlanetLab 490', () => {
  const m = loadDefaultLatency();
  const opts = faithfulVivaldiOptions({ dimensions: 2, height: true });
  const hosts = Array.from({ length: 20 }, (_, i) => i * 24);
  const others = Array.from({ length: m.n }, (_, i) => i).filter((i) => !hosts.includes(i));
  const emb = new MatrixEmbedding(m, { options: opts, seed: 1, nodes: others });
  emb.run(2000);
  const coords = emb.coords();

  it('2D+height embedding reaches a median relative error below 0.1', () => {
    const s = embeddingError(coords, m, others);
    expect(s.median).toBeLessThan(0.1);
    expect(s.median).toBeGreaterThan(0.05); // real data violates the triangle inequality
  });

  it('hosts placed from 16 landmarks predict RTTs to everyone about as well as embedded nodes', () => {
    const rng = createRng(5);
    const placed = [...coords];
    const meds: number[] = [];
    for (const h of hosts) {
      const lms = others
        .slice(0, 400)
        .filter((_, k) => k % 25 === h % 25)
        .slice(0, 16)
        .map((j) => ({ coord: coords[j]!, rttMs: rttOf(m, h, j) }));
      expect(lms.length).toBe(16);
      placed[h] = placeHost(lms, opts, rng);
      meds.push(nodeMedianError(placed, m, h, others));
    }
    meds.sort((a, b) => a - b);
    expect(quantileSorted(meds, 0.5)).toBeLessThan(0.12);
  });
});
