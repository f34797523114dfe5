// The model's figures quoted in docs/trust.md: ten seeds of each setting of
// test/trust/sim-world.ts, and the mean-field overhead of one honest volunteer.
// A model, not the benchmark. Run: node bin/run-ts.js test/trust/sweep.ts
import { expectedHonestOverhead } from '../../src/manager/trust/index.js';
import { median, runSimulation, type SimOptions } from './sim-world.js';

const pct = (x: number): string => `${(100 * x).toFixed(1)} %`;
const curve = expectedHonestOverhead(1000);
console.log(`honest volunteer, running overhead: ${[10, 50, 100, 200, 500, 1000].map((n) => `${n} tasks ${pct(curve.overhead[n - 1]!)}`).join(', ')}; trusted after ${curve.trustedAfter} tasks`);

const settings: Record<string, Partial<SimOptions>> = {
  default: {},
  small: { honest: 6, malicious: ['forger', 'dropper', 'coord-liar'], primaryTasks: 600, channels: 30 },
  'new keys': { rejoins: 2 },
  stress: { malicious: [], maxRatePerMinute: 1 / 20, pageRateSpread: 1, estimateBias: 1 / 3, checkDelayMs: 600_000, fetchFailure: 0.01 },
};
for (const [name, setting] of Object.entries(settings)) {
  const runs = Array.from({ length: 10 }, (_, i) => runSimulation({ seed: i + 1, ...setting }));
  const sum = (f: (r: (typeof runs)[number]) => number): number => runs.reduce((a, r) => a + f(r), 0);
  const perType: Record<string, number[]> = {};
  for (const r of runs) for (const [id, t] of Object.entries(r.tasksToDetect)) (perType[id.replace(/-\d+(-rejoin\d+)?$/, '')] ??= []).push(t ?? Infinity);
  console.log(
    `${name}: quarantined ${sum((r) => r.detected)}/${sum((r) => r.malicious)} malicious, ${sum((r) => r.falselyQuarantined)} honest; ` +
      `median tasks to detect per run ${runs.map((r) => r.tasksToDetectMedian).join(' ')}; ` +
      `overhead median ${pct(median(runs.map((r) => r.verificationOverhead)))} (${pct(Math.min(...runs.map((r) => r.verificationOverhead)))}–${pct(Math.max(...runs.map((r) => r.verificationOverhead)))}); ` +
      `forged current at end ${sum((r) => r.forgedCurrentAtEnd)}; honest pairs ${sum((r) => r.honestPairs)}, disagreeing ${sum((r) => r.honestPairDisagreements)}; honest outvoted ${sum((r) => r.honestDisagreements)}`,
  );
  if (Object.keys(perType).length > 0) console.log(`  per type, median (max) tasks to quarantine: ${Object.entries(perType).map(([k, v]) => `${k} ${median(v)} (${Math.max(...v)})`).join(', ')}`);
}
