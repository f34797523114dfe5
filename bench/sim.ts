// Benchmark of the simulator at full paper scale (not a test): one strategy on
// ruc (16000 channels, 2800 crawlers, 90000 steps), then rec with all three.
// Prints JSON lines with wall time, CPU time, events/s and peak RSS.
//   --quick      10000 steps instead of 90000
//   --scale k    hosts and crawlers × k (10: the 10× world; expect minutes per case)
//   --only ruc-iir|ruc-fixed|ruc-icr|rec-all|ruc-all4|rec-all4   run one case (the *-all4 cases,
//                every strategy incl. CAF, only when named: `sim run --strategy all`)
//   --jobs n     strategies at once on worker threads (sim run --jobs; default 1, one after
//                another as before). CPU and peak RSS are the whole process's, workers included.
import { STRATEGIES, type StrategyName } from '../src/recrawl/index.js';
import { runScenarioParallel } from '../sim/run-parallel.js';

function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

function cpuSeconds(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1e6;
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const steps = process.argv.includes('--quick') ? 10_000 : 90_000;
const scale = Number(flag('--scale') ?? 1);
if (!Number.isInteger(scale) || scale < 1) throw new Error(`--scale must be an integer >= 1, got ${flag('--scale')}`);
const only = flag('--only');
const jobs = Number(flag('--jobs') ?? 1);
if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`--jobs must be an integer >= 1, got ${flag('--jobs')}`);
const cases: { name: string; scenario: 'rec' | 'ruc'; strategies: StrategyName[]; onlyNamed?: boolean }[] = [
  { name: 'ruc-fixed', scenario: 'ruc', strategies: ['fixed'] },
  { name: 'ruc-iir', scenario: 'ruc', strategies: ['iir'] },
  { name: 'ruc-icr', scenario: 'ruc', strategies: ['icr'] },
  { name: 'rec-all', scenario: 'rec', strategies: ['fixed', 'iir', 'icr'] },
  { name: 'ruc-all4', scenario: 'ruc', strategies: [...STRATEGIES], onlyNamed: true },
  { name: 'rec-all4', scenario: 'rec', strategies: [...STRATEGIES], onlyNamed: true },
];
if (only !== undefined && !cases.some((c) => c.name === only)) throw new Error(`--only must be one of ${cases.map((c) => c.name).join(', ')}`);
for (const c of cases) {
  if (only !== undefined ? c.name !== only : c.onlyNamed === true) continue;
  const cpu0 = process.cpuUsage();
  const r = await runScenarioParallel({ scenario: c.scenario, strategies: c.strategies, routing: 'coord', seed: 1, steps, scale }, jobs);
  const per: Record<string, { wallSeconds: number; events: number; eventsPerSec: number }> = {};
  for (const [name, s] of Object.entries(r.strategies)) {
    per[name] = { wallSeconds: +s.wallSeconds.toFixed(2), events: s.events, eventsPerSec: Math.round(s.events / s.wallSeconds) };
  }
  console.log(
    JSON.stringify({
      scenario: c.scenario,
      strategies: c.strategies.join('+'),
      scale,
      steps,
      jobs,
      wallSeconds: +r.wallSeconds.toFixed(2),
      // CPU time of this process: on a shared machine wall time includes waiting for a core.
      cpuSeconds: +cpuSeconds(cpu0).toFixed(2),
      worldBuildSeconds: +r.world.buildSeconds.toFixed(2),
      events: r.events,
      eventsPerSec: Math.round(r.eventsPerSec),
      peakRssMb: Math.round(peakRssMb()),
      perStrategy: per,
    }),
  );
}
