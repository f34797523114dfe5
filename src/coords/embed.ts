// Offline embedding of a latency matrix, as the simulator and benchmark use it:
// each node gets `neighbours` fixed random valid neighbours; each round every
// node samples one of them and updates with the true RTT.
import type { Rng } from '../rng.js';
import { createRng, deriveSeed, randomInt } from '../rng.js';
import type { VivaldiOptions } from './options.js';
import { vivaldiOptions } from './options.js';
import type { LatencyMatrix } from './latency.js';
import type { Coordinate } from './vivaldi.js';
import { VivaldiNode, cloneCoordinate } from './vivaldi.js';

export interface EmbedOptions {
  options?: Partial<VivaldiOptions>;
  /** Rounds (each node updates once per round). Default 2000. */
  rounds?: number;
  /** Fixed random neighbours per node. Default 32. */
  neighbours?: number;
  seed?: number;
  /** Restrict the embedding to these nodes (neighbours drawn among them). */
  nodes?: ArrayLike<number>;
}

/**
 * Up to k distinct random valid neighbours of each node among `pool`; flat
 * Int32Array of n*k entries with per-node counts.
 */
export function chooseNeighbours(
  m: LatencyMatrix,
  k: number,
  rng: Rng,
  pool?: ArrayLike<number>,
  of?: ArrayLike<number>,
): { ids: Int32Array; counts: Int32Array; k: number } {
  const { n, rtt } = m;
  const candidatesPool = pool ?? Array.from({ length: n }, (_, i) => i);
  const owners = of ?? candidatesPool;
  const ids = new Int32Array(n * k).fill(-1);
  const counts = new Int32Array(n);
  const cand = new Int32Array(candidatesPool.length);
  for (let a = 0; a < owners.length; a++) {
    const i = owners[a]!;
    let c = 0;
    for (let b = 0; b < candidatesPool.length; b++) {
      const j = candidatesPool[b]!;
      if (j !== i && rtt[i * n + j]! > 0) cand[c++] = j;
    }
    const take = Math.min(k, c);
    for (let t = 0; t < take; t++) {
      const r = t + randomInt(rng, c - t);
      const tmp = cand[t]!;
      cand[t] = cand[r]!;
      cand[r] = tmp;
      ids[i * k + t] = cand[t]!;
    }
    counts[i] = take;
  }
  return { ids, counts, k };
}

/** A running embedding; `step()` plays one round. */
export class MatrixEmbedding {
  readonly nodes: VivaldiNode[];
  readonly opts: VivaldiOptions;
  readonly order: Int32Array;
  readonly neighbours: { ids: Int32Array; counts: Int32Array; k: number };
  round = 0;
  private readonly sampleRng: Rng;

  constructor(
    readonly matrix: LatencyMatrix,
    cfg: EmbedOptions = {},
  ) {
    const seed = cfg.seed ?? 1;
    const k = cfg.neighbours ?? 32;
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`embedMatrix: neighbours must be an integer >= 1, got ${k}`);
    this.opts = vivaldiOptions(cfg.options);
    const n = matrix.n;
    this.order = Int32Array.from(cfg.nodes ?? Array.from({ length: n }, (_, i) => i));
    for (const i of this.order) if (i < 0 || i >= n) throw new RangeError(`embedMatrix: node ${i} out of range 0..${n - 1}`);
    this.neighbours = chooseNeighbours(matrix, k, createRng(deriveSeed(seed, 'neighbours')), this.order);
    this.sampleRng = createRng(deriveSeed(seed, 'sampling'));
    const vivRng = createRng(deriveSeed(seed, 'vivaldi'));
    this.nodes = Array.from({ length: n }, () => new VivaldiNode(this.opts, vivRng));
  }

  /** One round: every node (in index order) samples a neighbour and updates. */
  step(): void {
    const { ids, counts, k } = this.neighbours;
    const { n, rtt } = this.matrix;
    const nodes = this.nodes;
    const order = this.order;
    const rng = this.sampleRng;
    for (let a = 0; a < order.length; a++) {
      const i = order[a]!;
      const c = counts[i]!;
      if (c === 0) continue;
      const j = ids[i * k + Math.floor(rng.next() * c)]!;
      nodes[i]!.update(nodes[j]!.coord, rtt[i * n + j]!, j);
    }
    this.round++;
  }

  run(rounds: number): void {
    for (let r = 0; r < rounds; r++) this.step();
  }

  /** Live coordinate objects (not copies). */
  coords(): Coordinate[] {
    return this.nodes.map((v) => v.coord);
  }
}

/** Embeds the matrix and returns a copy of every node's final coordinate. */
export function embedMatrix(matrix: LatencyMatrix, cfg: EmbedOptions = {}): Coordinate[] {
  const rounds = cfg.rounds ?? 2000;
  if (!Number.isInteger(rounds) || rounds < 0) throw new RangeError(`embedMatrix: rounds must be an integer >= 0, got ${rounds}`);
  const e = new MatrixEmbedding(matrix, cfg);
  e.run(rounds);
  return e.nodes.map((v) => cloneCoordinate(v.coord));
}
