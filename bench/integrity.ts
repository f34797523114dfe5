// npm run bench:integrity [-- --json] [--honest N] [--malicious forge-text,empty,drop,fake-coord,...] [--sites N]
//                         [--pages N] [--time-scale X] [--seed N] [--max-seconds S] [--log-dir DIR]
//                         [--run-on N] [--strategy fixed|iir|icr|caf] [--rate-cap X|off]
//                         [--join-after S] [--late-honest K]
//
// Issue 13's benchmark: `dht-manager serve` and N honest plus M misbehaving
// `volunteer-crawler join` processes (the real CLI; misbehaving ones through
// the test plugin testbed/misbehave.ts: forge-text rewrites page text under the
// true digest, empty acknowledges tasks and uploads nothing, drop accepts tasks
// and never uploads, fake-coord claims a coordinate 300 ms from its own), crawling the
// local test web in compressed time. Prints the issue's figures first
// (targets: every malicious volunteer quarantined, no honest one, no forged
// version current at the end, detection within a median of 20 of the
// malicious volunteer's tasks, overhead ≤ 10 %), then the yardsticks.
//
// The run stops once every misbehaving volunteer is caught and its forged
// pages replaced, so its overhead is the start-up cost of catching them.
// `--run-on N` keeps it going for N more tasks (a fixed horizon) and adds the
// steady-state figure: the overhead over those N tasks alone (nobody left to
// catch: what checking costs a network of honest volunteers) and over the
// whole run. The issue's figures stay the ones at the stop point. `--strategy`
// runs the manager with another recrawl strategy than serve's default (CAF
// since session 11, which uses idle volunteer threads and so runs several
// times the tasks IIR does in this world: the overhead's denominator moves
// with it, so compare strategies' overheads side by side). `--rate-cap X`
// caps each channel's recrawl rate at X times its change rate; without it the
// manager runs with serve's own default (2). Until session 11 the bench always
// passed 1000 (no cap in effect): harmless under IIR, but under CAF, which
// fills idle threads, it let volunteers recrawl unchanged pages many times a
// virtual day — several times the tasks, which shrank the overhead's
// denominator's meaning (`--rate-cap 1000` reproduces those runs). `atTasks`
// gives the extra crawls over the run's first 50, 100, 150, ... tasks: a
// yardstick that does not move with how early the run stopped. `--join-after S`
// starts the misbehaving volunteers and the last K honest ones (`--late-honest K`,
// default 0) S real seconds after the channels were added: newcomers joining a
// running network, whose first crawls are of channels others have crawled and
// checked (where stored text can stand in for an intro check or a third crawl,
// docs/trust.md); `realSecondsToDetect` then counts from the run's start.
import { loadavg } from 'node:os';
import { parseArgsOrExit } from './parse-args.js';
import { MISBEHAVIOURS, type Misbehaviour } from '../testbed/misbehave.js';
import { STRATEGIES } from '../src/recrawl/index.js';
import { runIntegrity } from '../testbed/integrity.js';

const { values } = parseArgsOrExit({
  options: {
    json: { type: 'boolean', default: false },
    honest: { type: 'string', default: '5' },
    malicious: { type: 'string', default: 'forge-text,forge-text,empty,drop,fake-coord' },
    sites: { type: 'string', default: '12' },
    pages: { type: 'string', default: '8' },
    'time-scale': { type: 'string', default: '600' },
    seed: { type: 'string', default: '1' },
    'max-seconds': { type: 'string', default: '1500' },
    'log-dir': { type: 'string' },
    'run-on': { type: 'string', default: '0' },
    strategy: { type: 'string' },
    'rate-cap': { type: 'string' },
    'join-after': { type: 'string', default: '0' },
    'late-honest': { type: 'string', default: '0' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  process.stdout.write('usage: npm run bench:integrity -- [--json] [--honest N] [--malicious forge-text,empty,drop,fake-coord,...] [--sites N] [--pages N] [--time-scale X] [--seed N] [--max-seconds S] [--log-dir DIR] [--run-on N] [--strategy fixed|iir|icr|caf] [--rate-cap X|off] [--join-after S] [--late-honest K]\n');
  process.exit(0);
}
const int = (name: string, v: string, lo: number, hi: number): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < lo || n > hi) {
    process.stderr.write(`--${name} must be an integer in [${lo}, ${hi}], got ${v}\n`);
    process.exit(2);
  }
  return n;
};
const malicious = values.malicious.split(',').filter((s) => s !== '');
for (const m of malicious) {
  if (!(MISBEHAVIOURS as readonly string[]).includes(m)) {
    process.stderr.write(`--malicious: unknown misbehaviour ${m} (${MISBEHAVIOURS.join(', ')})\n`);
    process.exit(2);
  }
}
if (values.strategy !== undefined && !(STRATEGIES as readonly string[]).includes(values.strategy)) {
  process.stderr.write(`--strategy: unknown strategy ${values.strategy} (${STRATEGIES.join(', ')})\n`);
  process.exit(2);
}
const rateCap = values['rate-cap'];
if (rateCap !== undefined && rateCap !== 'off' && !(Number.isFinite(Number(rateCap)) && Number(rateCap) > 0)) {
  process.stderr.write(`--rate-cap must be a number > 0 or off, got ${rateCap}\n`);
  process.exit(2);
}
const honest = int('honest', values.honest, 3, 50);
const load = loadavg()[0]!;
// Ctrl-C or a kill ends the run early: the processes are stopped and the figures so far printed.
const abort = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => abort.abort());
const res = await runIntegrity({
  honest,
  malicious: malicious as Misbehaviour[],
  sites: int('sites', values.sites, 1, 200),
  pagesPerSite: int('pages', values.pages, 2, 200),
  timeScale: int('time-scale', values['time-scale'], 1, 100_000),
  maxRunMs: int('max-seconds', values['max-seconds'], 10, 36_000) * 1000,
  settleMs: 120_000,
  runOnTasks: int('run-on', values['run-on'], 0, 100_000),
  joinAfterMs: int('join-after', values['join-after'], 0, 36_000) * 1000,
  lateHonest: int('late-honest', values['late-honest'], 0, honest - 1),
  managerArgs: [...(rateCap !== undefined ? ['--rate-cap', rateCap] : []), ...(values.strategy !== undefined ? ['--strategy', values.strategy] : [])],
  seed: int('seed', values.seed, 0, 2 ** 31),
  ...(values['log-dir'] !== undefined ? { logDir: values['log-dir'] } : {}),
  onProgress: values.json ? undefined : (s) => process.stderr.write(`${s}\n`),
  signal: abort.signal,
});
const out = { ...res, strategy: values.strategy ?? null /* null: serve's default */, rateCap: rateCap ?? null, loadAvgStart: Math.round(load * 100) / 100, loadAvgEnd: Math.round(loadavg()[0]! * 100) / 100 };
if (values.json) process.stdout.write(JSON.stringify(out) + '\n');
else {
  const ok = (b: boolean) => (b ? 'ok' : 'SHORT');
  process.stdout.write(
    [
      `malicious quarantined   ${res.detected}/${res.malicious}  ${ok(res.detected === res.malicious)}`,
      `honest quarantined      ${res.falselyQuarantined}/${res.honest}  ${ok(res.falselyQuarantined === 0)}`,
      `forged current at end   ${res.forgedCurrentAtEnd} (peak ${res.forgedCurrentPeak})  ${ok(res.forgedCurrentAtEnd === 0)}`,
      `tasks to detect         median ${res.tasksToDetectMedian ?? '-'} (${res.tasksToDetect.join(', ')})  ${ok(res.tasksToDetectMedian !== null && res.tasksToDetectMedian <= 20)}`,
      `verification overhead   ${(res.verificationOverhead * 100).toFixed(1)} % (${res.checks} checks + ${res.tieBreaks} third crawls / ${res.tasks} tasks)  ${ok(res.verificationOverhead <= 0.1)}`,
      `  of honest tasks        ${(res.honestOverhead * 100).toFixed(1)} % (the rest checks the misbehaving ones)`,
      `honest overlay verdicts ${res.honestOverlayVerdicts.ok} ok, ${res.honestOverlayVerdicts.bad} bad  ${ok(res.honestOverlayVerdicts.bad === 0)}`,
      `misbehaving tasks       ${res.maliciousTasks.join(', ')}`,
      `  with re-crawls         ${(res.overheadWithRecrawls * 100).toFixed(1)} % (re-crawls replace an attacker's pages: not verification by the issue's definition)`,
      ...(res.horizon !== undefined
        ? [
            `steady state (--run-on ${res.horizon.runOnTasks}): ${(res.horizon.afterDetection.overhead * 100).toFixed(1)} % over the ${res.horizon.afterDetection.tasks} tasks after the stop point (${res.horizon.afterDetection.checks} checks + ${res.horizon.afterDetection.tieBreaks} third crawls, ${res.horizon.seconds} s; ${JSON.stringify(res.horizon.afterDetection.byReason)})`,
            `  whole run               ${(res.horizon.wholeRun.overhead * 100).toFixed(1)} % (${res.horizon.wholeRun.checks} checks + ${res.horizon.wholeRun.tieBreaks} third crawls / ${res.horizon.wholeRun.tasks} tasks)`,
          ]
        : []),
      `over the first N tasks   ${res.atTasks.map((a) => `${a.tasks}: ${(a.overhead * 100).toFixed(1)} % (${a.checks} + ${a.tieBreaks}, ${a.caught} caught)`).join('; ') || '-'}`,
      `re-crawls after quarantine ${res.recrawls}; checks dropped ${res.checksDropped}, deferred ${res.checksDeferred}, cancelled ${res.checksCancelled}; third crawls with no majority ${res.noMajority}, outvoting on coverage ${res.coverageOutvotes}; settled by a stored crawl ${res.storedTieBreaks} (${res.witnessTieBreaks} by a check crawl's witness); spared by stored text: ${res.storedIntroPasses} intro checks, ${res.textTieBreaks} third crawls; extra crawls on honest volunteers' tasks ${res.checkedHonest}, on misbehaving ones' ${res.checkedMalicious} ${JSON.stringify(res.checkedBy)}; by reason ${JSON.stringify(res.checksByReason)}; ${res.runSeconds} s at time scale ${res.timeScale}; load ${out.loadAvgStart} → ${out.loadAvgEnd}`,
    ].join('\n') + '\n',
  );
}
