// The simulator's speed-ups must not change a decision: small runs on the
// shipped PlanetLab data give byte-for-byte the --json results recorded from
// the code before them (main at 7757e1a, compiled, the same runs). Every field
// of the report counts except wall-clock times and the data file's path.
//
// If a change to the model is meant to move these figures, say so in its
// commit and record the new digests (the failure prints them).
// Session 8 (sim8): the two coordinate-routed runs re-recorded — the modelled
// search became the live Router's (src/dht/cell-search.ts: coarsest level
// first, whole provider lists, the Router's 30 s / 10 min cell cache); the
// hash-routed run is unchanged.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EARLIER_MODEL, FAITHFUL_MODEL } from '../../sim/model.js';
import type { RunParams } from '../../sim/run.js';
import { runScenario } from '../../sim/run.js';

const NOT_COMPARED = new Set(['wallSeconds', 'eventsPerSec', 'buildSeconds', 'latencySource']);

function comparable(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(comparable);
  if (x !== null && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) if (!NOT_COMPARED.has(k)) out[k] = comparable(v);
    return out;
  }
  return x;
}

const RUNS: { name: string; params: RunParams; digest: string; tasks: number[] }[] = [
  {
    name: "ruc, the paper's readings, every strategy",
    params: { scenario: 'ruc', strategies: ['fixed', 'iir', 'icr', 'caf'], routing: 'coord', seed: 1, quick: true, steps: 2000, model: FAITHFUL_MODEL, recrawl: { icrEncourage: 'group' } },
    digest: '3d0fe79cf06a66bce35fbdde2ba842c10e9092323f9e03cbc97506afc1c9d384',
    tasks: [19532, 25034, 27223, 26013],
  },
  {
    name: 'rec, the earlier readings, another seed',
    params: { scenario: 'rec', strategies: ['fixed', 'iir'], routing: 'coord', seed: 2, quick: true, steps: 2000, model: EARLIER_MODEL, recrawl: { icrEncourage: 'system' } },
    digest: '91da8541f41f3fa5c7c1fb6f8256cab8f80359fe8f6887e2c581ca50006321d7',
    tasks: [19948, 24049],
  },
  {
    name: 'ruc, hash routing',
    params: { scenario: 'ruc', strategies: ['iir'], routing: 'hash', seed: 1, quick: true, steps: 2000, model: EARLIER_MODEL, recrawl: { icrEncourage: 'system' } },
    digest: 'ca245f0ece6e5767e249dc5fef8ebf220c94ff35638621bb0dd10a1b074ac7da',
    tasks: [25931],
  },
];

describe('the same seed gives the same results as before the speed-ups', () => {
  for (const run of RUNS) {
    it(run.name, () => {
      const r = runScenario(run.params);
      const tasks = Object.values(r.strategies).map((s) => s!.tasksTotal);
      const digest = createHash('sha256').update(JSON.stringify(comparable(r))).digest('hex');
      expect({ tasks, digest }).toEqual({ tasks: run.tasks, digest: run.digest });
    });
  }
});
