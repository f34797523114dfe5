// Benchmark of the simulator at full paper scale (not a test): one strategy on
// ruc (16000 channels, 2800 crawlers, 90000 steps), then rec with all three.
// Prints JSON lines with wall time, events/s and peak RSS.
import { runScenario } from '../sim/run.js';

function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

function cpuSeconds(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1e6;
}

const args = process.argv.slice(2);
const steps = args.includes('--quick') ? 10_000 : 90_000;
const cases: { scenario: 'rec' | 'ruc'; strategies: ('fixed' | 'iir' | 'icr')[] }[] = [
  { scenario: 'ruc', strategies: ['fixed'] },
  { scenario: 'ruc', strategies: ['iir'] },
  { scenario: 'ruc', strategies: ['icr'] },
  { scenario: 'rec', strategies: ['fixed', 'iir', 'icr'] },
];
for (const c of cases) {
  const cpu0 = process.cpuUsage();
  const r = runScenario({ scenario: c.scenario, strategies: c.strategies, routing: 'coord', seed: 1, steps });
  const per: Record<string, { wallSeconds: number; events: number; eventsPerSec: number }> = {};
  for (const [name, s] of Object.entries(r.strategies)) {
    per[name] = { wallSeconds: +s.wallSeconds.toFixed(2), events: s.events, eventsPerSec: Math.round(s.events / s.wallSeconds) };
  }
  console.log(
    JSON.stringify({
      scenario: c.scenario,
      strategies: c.strategies.join('+'),
      steps,
      wallSeconds: +r.wallSeconds.toFixed(2),
      // CPU time of this process: on a shared machine wall time includes waiting for a core.
      cpuSeconds: +(cpuSeconds(cpu0)).toFixed(2),
      worldBuildSeconds: +r.world.buildSeconds.toFixed(2),
      events: r.events,
      eventsPerSec: Math.round(r.eventsPerSec),
      peakRssMb: Math.round(peakRssMb()),
      perStrategy: per,
    }),
  );
}
