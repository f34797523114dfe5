// Vivaldi benchmark: embedding accuracy, convergence, speed and joins on a
// latency matrix (default: the shipped PlanetLab 490-node matrix).
//   npm run bench:coords -- [--json] [--latency FILE] [--seeds N] [--rounds N]
import { parseArgs } from 'node:util';
import { createRng, deriveSeed } from '../src/rng.js';
import {
  DEFAULT_LATENCY_PATH,
  MatrixEmbedding,
  chooseNeighbours,
  embeddingError,
  faithfulVivaldiOptions,
  loadLatencyFile,
  nodeMedianError,
  quantileSorted,
  validPairCount,
  type LatencyFormat,
  type LatencyMatrix,
  type VivaldiOptions,
} from '../src/coords/index.js';

const MODELS: Record<string, Partial<VivaldiOptions>> = {
  '2d': { dimensions: 2, height: false },
  '3d': { dimensions: 3, height: false },
  '5d': { dimensions: 5, height: false },
  '2d+h': { dimensions: 2, height: true },
  '8d+h': { dimensions: 8, height: true },
};

const HELP = `Usage: npm run bench:coords -- [options]

Embeds a latency matrix with Vivaldi (faithful preset: every live-node guard
off, cc = ce = 0.25, initial height 1 ms) for the models ${Object.keys(MODELS).join(', ')}.
Every node gets --neighbours fixed random valid neighbours; each round every node
samples one and updates with the true RTT. Reports median / p90 relative error
over all valid pairs (mean over seeds), rounds to come within 10% of the final
median, updates per second, and a join experiment (200 nodes join 290 converged
ones, 2d+h): samples a newcomer needs until the newcomers' median error is within
1.2x of the settled nodes'.

Options:
  --latency FILE     latency file (ms matrix, King matrix or E2EGraph; default
                     ${DEFAULT_LATENCY_PATH})
  --format F         force the format: ms-matrix | king-matrix | e2egraph
  --seeds N          seeds per model (default 5)
  --rounds N         rounds per embedding (default 2000)
  --neighbours N     fixed neighbours per node (default 32)
  --models LIST      comma-separated subset of models (default all)
  --no-join          skip the join experiment
  --json             print exactly one JSON object on stdout
  -h, --help         this help
`;

function fail(msg: string): never {
  process.stderr.write(`bench:coords: ${msg}\nTry --help.\n`);
  process.exit(2);
}

function posInt(name: string, v: string | undefined, def: number): number {
  if (v === undefined) return def;
  if (!/^\d+$/.test(v) || Number(v) < 1) fail(`--${name} must be a positive integer, got '${v}'`);
  return Number(v);
}

let args;
try {
  args = parseArgs({
    options: {
      latency: { type: 'string' },
      format: { type: 'string' },
      seeds: { type: 'string' },
      rounds: { type: 'string' },
      neighbours: { type: 'string' },
      models: { type: 'string' },
      'no-join': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
    strict: true,
  }).values;
} catch (e) {
  fail((e as Error).message);
}
if (args.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const seeds = posInt('seeds', args.seeds, 5);
const rounds = posInt('rounds', args.rounds, 2000);
const neighbours = posInt('neighbours', args.neighbours, 32);
const modelNames = args.models === undefined ? Object.keys(MODELS) : args.models.split(',').map((s) => s.trim());
for (const name of modelNames) if (!(name in MODELS)) fail(`unknown model '${name}' (choose from ${Object.keys(MODELS).join(', ')})`);
const formats = ['ms-matrix', 'king-matrix', 'e2egraph'];
if (args.format !== undefined && !formats.includes(args.format)) fail(`--format must be one of ${formats.join(', ')}, got '${args.format}'`);
const path = args.latency ?? DEFAULT_LATENCY_PATH;

let matrix: LatencyMatrix;
try {
  matrix = loadLatencyFile(path, args.format as LatencyFormat | undefined);
} catch (e) {
  process.stderr.write(`bench:coords: cannot load latency data: ${(e as Error).message}\n`);
  process.exit(1);
}

const tty = process.stderr.isTTY === true;
function progress(msg: string): void {
  if (tty) process.stderr.write(`\r\x1b[K${msg}`);
}

interface SeedResult {
  median: number;
  p90: number;
  roundsToConverge: number;
  updatesPerSec: number;
}

function runModel(name: string, seed: number): SeedResult {
  const emb = new MatrixEmbedding(matrix, { options: faithfulVivaldiOptions(MODELS[name]), neighbours, seed });
  let active = 0;
  for (let i = 0; i < matrix.n; i++) if (emb.neighbours.counts[i]! > 0) active++;
  const evalEvery = Math.max(1, Math.round(rounds / 200));
  const trace: Array<[number, number]> = [];
  for (let r = 1; r <= rounds; r++) {
    emb.step();
    if (r % evalEvery === 0 || r === rounds) {
      trace.push([r, embeddingError(emb.coords(), matrix).median]);
      if (r % (evalEvery * 10) === 0) progress(`${name} seed ${seed}: round ${r}/${rounds}`);
    }
  }
  const fin = embeddingError(emb.coords(), matrix);
  const target = fin.median * 1.1;
  const hit = trace.find(([, med]) => med <= target);
  // Speed: extra rounds timed in one block, after the scores are taken, so the
  // scoring passes in between do not disturb the measurement.
  const speedRounds = Math.max(50, Math.ceil(400_000 / Math.max(1, active)));
  const t0 = process.hrtime.bigint();
  emb.run(speedRounds);
  const ns = process.hrtime.bigint() - t0;
  return {
    median: fin.median,
    p90: fin.p90,
    roundsToConverge: hit ? hit[0] : rounds,
    updatesPerSec: (active * speedRounds) / (Number(ns) / 1e9),
  };
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
function median(xs: number[]): number {
  return quantileSorted([...xs].sort((a, b) => a - b), 0.5);
}

/** Per-node median errors against `others`, then their median. */
function groupError(coords: ReturnType<MatrixEmbedding['coords']>, group: number[], others: number[]): number {
  const meds = group.map((i) => nodeMedianError(coords, matrix, i, others)).filter((v) => v === v);
  return median(meds);
}

interface JoinResult {
  samplesToSettle: number | null;
  settled: number;
  newcomers: number;
}

function runJoin(seed: number, maxSamples: number): JoinResult {
  const n = matrix.n;
  const nSettled = n >= 490 ? 290 : Math.floor((n * 290) / 490);
  const nNew = n >= 490 ? 200 : n - nSettled;
  const perm = Array.from({ length: n }, (_, i) => i);
  const prng = createRng(deriveSeed(seed, 'join-perm'));
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(prng.next() * (i + 1));
    [perm[i], perm[j]] = [perm[j]!, perm[i]!];
  }
  const settled = perm.slice(0, nSettled);
  const newcomers = perm.slice(nSettled, nSettled + nNew);
  const all = [...settled, ...newcomers];
  const emb = new MatrixEmbedding(matrix, { options: faithfulVivaldiOptions(MODELS['2d+h']), neighbours, seed, nodes: settled });
  for (let r = 1; r <= rounds; r++) {
    emb.step();
    if (r % 200 === 0) progress(`join seed ${seed}: settling ${r}/${rounds}`);
  }
  const nb = chooseNeighbours(matrix, neighbours, createRng(deriveSeed(seed, 'join-neighbours')), all, newcomers);
  const rng = createRng(deriveSeed(seed, 'join-sampling'));
  const nodes = emb.nodes;
  const { rtt } = matrix;
  const coords = emb.coords();
  for (let s = 1; s <= maxSamples; s++) {
    emb.step();
    for (const i of newcomers) {
      const c = nb.counts[i]!;
      if (c === 0) continue;
      const j = nb.ids[i * nb.k + Math.floor(rng.next() * c)]!;
      nodes[i]!.update(nodes[j]!.coord, rtt[i * n + j]!, j);
    }
    if (s <= 50 || s % 5 === 0) {
      const ref = groupError(coords, settled, settled);
      const cur = groupError(coords, newcomers, settled);
      if (s % 20 === 0) progress(`join seed ${seed}: ${s} samples, newcomers ${cur.toFixed(3)} vs settled ${ref.toFixed(3)}`);
      if (cur <= 1.2 * ref) return { samplesToSettle: s, settled: nSettled, newcomers: nNew };
    }
  }
  return { samplesToSettle: null, settled: nSettled, newcomers: nNew };
}

const results = modelNames.map((name) => {
  const per: SeedResult[] = [];
  for (let s = 1; s <= seeds; s++) per.push(runModel(name, s));
  const meds = per.map((p) => p.median);
  return {
    model: name,
    median: mean(meds),
    p90: mean(per.map((p) => p.p90)),
    roundsToConverge: median(per.map((p) => p.roundsToConverge)),
    updatesPerSec: median(per.map((p) => p.updatesPerSec)),
    medianMin: Math.min(...meds),
    medianMax: Math.max(...meds),
  };
});

let join: { samplesToSettle: number | null; perSeed: Array<number | null>; settled: number; newcomers: number; model: string } | null = null;
if (!args['no-join'] && matrix.n >= 4) {
  const per: JoinResult[] = [];
  for (let s = 1; s <= seeds; s++) per.push(runJoin(s, 2000));
  const got = per.map((p) => p.samplesToSettle);
  const ok = got.filter((v): v is number => v !== null);
  join = {
    samplesToSettle: ok.length === got.length ? median(ok) : null,
    perSeed: got,
    settled: per[0]!.settled,
    newcomers: per[0]!.newcomers,
    model: '2d+h',
  };
}
if (tty) process.stderr.write('\r\x1b[K');

const dataset = `${matrix.source} (${matrix.n} nodes, ${validPairCount(matrix)} valid pairs)`;
if (args.json) {
  const out = {
    dataset,
    seeds,
    rounds,
    neighbours,
    options: 'faithful preset (no guards), cc = ce = 0.25, initialError 1, initialHeightMs 1',
    models: results.map((r) => ({
      model: r.model,
      median: r.median,
      p90: r.p90,
      roundsToConverge: r.roundsToConverge,
      updatesPerSec: r.updatesPerSec,
      medianMin: r.medianMin,
      medianMax: r.medianMax,
    })),
    join,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
} else {
  const f3 = (x: number) => x.toFixed(4);
  const lines = [
    `Dataset: ${dataset}`,
    `Vivaldi faithful preset (no guards), cc = ce = 0.25; ${neighbours} neighbours, ${rounds} rounds, ${seeds} seed(s); error = |d̂ − d| / d over all valid pairs, mean over seeds.`,
    '',
    '| model | median | p90 | median range (seeds) | rounds to within 10% of final median | updates/s |',
    '|---|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.model} | ${f3(r.median)} | ${f3(r.p90)} | ${f3(r.medianMin)}–${f3(r.medianMax)} | ${r.roundsToConverge} | ${(r.updatesPerSec / 1e6).toFixed(2)} M |`,
    ),
  ];
  if (join) {
    lines.push(
      '',
      `Join (${join.model}): ${join.newcomers} nodes join ${join.settled} converged ones; samples per newcomer until the newcomers' median error <= 1.2x the settled nodes': ` +
        `${join.samplesToSettle ?? 'not reached within 2000'} (per seed: ${join.perSeed.map((v) => v ?? '>2000').join(', ')})`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
