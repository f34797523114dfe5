// The owner's verbs: `status`, `pause [--for 2h]`, `resume` and `prefs` talk
// to the running node over its control socket (prefs works on the file when
// no node runs); `service install | uninstall | status` runs the node as a
// systemd user service. Exit codes: 0 done, 1 failed, 2 bad usage, 3 no
// running node in the data directory.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { controlRequest, NoNodeError, type ControlRequest } from './control.js';
import { defaultDataDir } from './identity.js';
import { Ledger } from './ledger.js';
import { formatContribution, formatOwnerStatus, type OwnerStatus } from './owner-status.js';
import { describePrefs, loadPrefsFile, prefsPath, setPrefInFile, type Prefs } from './prefs.js';
import { defaultServiceEnv, installService, serviceStatus, uninstallService } from './service.js';

const NO_NODE_EXIT = 3;
const SCRIPT = fileURLToPath(new URL('../../bin/volunteer-crawler.js', import.meta.url));
const DOCS = fileURLToPath(new URL('../../docs/volunteer.md', import.meta.url));

/** "2h", "90m", "1h30m", "45s", "1d" → ms. */
export function parseDuration(v: string): number {
  const m = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?:in)?)?(?:(\d+)s)?$/.exec(v.trim());
  if (!m || v.trim() === '') throw new InvalidArgumentError('expected a duration such as 2h, 90m, 1h30m or 1d');
  const ms = ((Number(m[1] ?? 0) * 24 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 60_000 + Number(m[4] ?? 0) * 1000;
  if (ms < 1000 || ms > 365 * 86_400_000) throw new InvalidArgumentError('the duration must be between 1 s and 365 days');
  return ms;
}

const dataDirOption = (c: Command) => c.option('--data-dir <dir>', 'the node\'s data directory', defaultDataDir());

/** Asks the node; prints "no running node in <dir>" and sets exit code 3 when none listens. */
async function ask(dataDir: string, req: ControlRequest): Promise<{ ok: true; result: unknown } | { ok: false }> {
  try {
    return { ok: true, result: await controlRequest(dataDir, req) };
  } catch (e) {
    if (e instanceof NoNodeError) {
      console.error(e.message);
      process.exitCode = NO_NODE_EXIT;
      return { ok: false };
    }
    throw e;
  }
}

function printPrefs(file: string, prefs: Prefs, error: string | null): void {
  console.log(`preferences: ${file}`);
  for (const l of describePrefs(prefs)) console.log(`  ${l}`);
  if (error) console.log(`NOT IN FORCE (the node keeps its last good preferences): ${error}`);
}

function registerControlVerbs(program: Command): void {
  dataDirOption(program.command('status').description('show what the running node is doing, why it is paused if it is, and what this computer has given'))
    .option('--json', 'print the raw status object', false)
    .action(async (f: { dataDir: string; json: boolean }) => {
      const r = await ask(f.dataDir, { cmd: 'status' });
      if (r.ok) {
        console.log(f.json ? JSON.stringify(r.result, null, 2) : formatOwnerStatus(r.result as OwnerStatus));
        return;
      }
      const ledger = Ledger.path(f.dataDir);
      if (existsSync(ledger)) {
        const { prefs } = loadPrefsFile(prefsPath(f.dataDir));
        const l = new Ledger({ path: ledger, autoFlushMs: 0, periods: { timeZone: prefs.timeZone, ...prefs.transfer } });
        console.log('given so far (from the ledger):');
        for (const line of formatContribution(l.history(7))) console.log(line);
      }
    });

  dataDirOption(program.command('pause').description('pause the running node: it hands its tasks on and takes no new ones'))
    .option('--for <duration>', 'resume by itself after this long (2h, 90m, 1d); default: until `resume`', parseDuration)
    .action(async (f: { dataDir: string; for?: number }) => {
      const r = await ask(f.dataDir, { cmd: 'pause', ...(f.for !== undefined ? { forMs: f.for } : {}) });
      if (r.ok) console.log(f.for !== undefined ? `paused for ${Math.round(f.for / 60_000)} min` : 'paused until `volunteer-crawler resume`');
    });

  dataDirOption(program.command('resume').description('end a pause made with `pause` (a cap, schedule or battery pause still holds)')).action(async (f: { dataDir: string }) => {
    const r = await ask(f.dataDir, { cmd: 'resume' });
    if (r.ok) {
      const s = r.result as Partial<OwnerStatus> | null;
      console.log(s?.state === 'paused' ? `resumed; still paused: ${(s.details ?? []).join('; ')}` : 'resumed');
    }
  });

  const prefs = program.command('prefs').description('show or change the preferences (<data-dir>/volunteer.toml); a running node applies them at once');
  dataDirOption(prefs.command('get', { isDefault: true }).description('show the preferences in force'))
    .option('--json', 'print them as JSON', false)
    .action(async (f: { dataDir: string; json: boolean }) => {
      let file = prefsPath(f.dataDir);
      let p: Prefs;
      let error: string | null = null;
      try {
        const r = (await controlRequest(f.dataDir, { cmd: 'prefs.get' })) as { file: string; prefs: Prefs; error: string | null };
        ({ file, prefs: p, error } = r);
      } catch (e) {
        if (!(e instanceof NoNodeError)) throw e;
        p = loadPrefsFile(file).prefs;
      }
      if (f.json) console.log(JSON.stringify(p, null, 2));
      else printPrefs(file, p, error);
    });
  dataDirOption(prefs.command('set').description('set one key, e.g. `prefs set transfer.monthly_cap 50G` or `prefs set schedule.monday \'["18:00-23:00"]\'`'))
    .argument('<key>', 'dotted key, e.g. threads, transfer.daily_cap, pause_when.on_battery, never_fetch.domain_suffixes')
    .argument('<value>', 'a TOML value; plain words need no quotes')
    .action(async (key: string, value: string, f: { dataDir: string }) => {
      try {
        const r = (await controlRequest(f.dataDir, { cmd: 'prefs.set', key, value })) as { file: string; prefs: Prefs };
        console.log(`set ${key}; the running node applied it`);
        printPrefs(r.file, r.prefs, null);
      } catch (e) {
        if (!(e instanceof NoNodeError)) throw e;
        const file = prefsPath(f.dataDir);
        const p = setPrefInFile(file, key, value);
        console.log(`set ${key} in ${file}; no node is running, it applies when one starts`);
        printPrefs(file, p, null);
      }
    });
}

/** Validates join arguments with the join verb's own definition; returns the data directory they name. */
async function checkJoinArgs(args: string[]): Promise<string> {
  const { registerJoin } = await import('./join.js');
  const { parseBootstrap } = await import('./node.js');
  let problem = '';
  const p = new Command('volunteer-crawler')
    .exitOverride()
    .configureOutput({ writeOut: () => undefined, writeErr: (s) => (problem += s) });
  registerJoin(p);
  const join = p.commands.find((c) => c.name() === 'join') as Command;
  let bootstrap: string[] = [];
  join.action((b: string[]) => {
    bootstrap = b;
  });
  try {
    await p.parseAsync(['join', ...args], { from: 'user' });
  } catch {
    throw new Error(`these join arguments would not start: ${problem.trim().split('\n')[0] ?? 'invalid'} (see volunteer-crawler join --help)`);
  }
  parseBootstrap(bootstrap);
  const o = join.opts<{ dataDir: string; first?: boolean }>();
  if (bootstrap.length === 0 && o.first !== true) throw new Error('give at least one bootstrap multiaddr (or --first), as for join');
  return resolve(o.dataDir);
}

/** The arguments without any --data-dir (it is added back, absolute). */
function withoutDataDir(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--data-dir') i++;
    else if (!args[i]!.startsWith('--data-dir=')) out.push(args[i]!);
  }
  return out;
}

function registerServiceVerbs(program: Command): void {
  const svc = program.command('service').description('run the volunteer as a service that starts with the computer (systemd user unit on Linux)');
  svc
    .command('install')
    .description('write, enable and start the service; the arguments are those of `join`, e.g. service install <bootstrap> --manager <id> --threads 2')
    .argument('[join-args...]', 'arguments for `volunteer-crawler join`')
    .allowUnknownOption()
    .option('--dry-run', 'print the unit file instead of installing it', false)
    .action(async (joinArgs: string[], f: { dryRun: boolean }) => {
      const dataDir = await checkJoinArgs(joinArgs);
      // The service's environment differs from this shell's: name the data directory explicitly and absolutely.
      const args = [...withoutDataDir(joinArgs), '--data-dir', dataDir, '--no-status'];
      const env = defaultServiceEnv(SCRIPT);
      if (f.dryRun) {
        const { renderUnit, unitPath } = await import('./service.js');
        console.log(`# ${unitPath(env)}\n${renderUnit({ execPath: env.execPath, script: SCRIPT, joinArgs: args, dataDir, docs: DOCS })}`);
        return;
      }
      const r = await installService(env, args, dataDir, DOCS);
      for (const m of r.messages) console.log(m);
      if (!r.enabled) process.exitCode = 1;
    });
  svc
    .command('uninstall')
    .description('stop, disable and remove the service (the node hands its tasks on as it stops)')
    .action(async () => {
      for (const m of await uninstallService(defaultServiceEnv(SCRIPT))) console.log(m);
    });
  svc
    .command('status')
    .description('is the service installed, enabled and running?')
    .action(async () => {
      const s = await serviceStatus(defaultServiceEnv(SCRIPT));
      if (!s.installed) {
        console.log(`not installed (${s.unitFile} does not exist); install it with: volunteer-crawler service install <bootstrap> --manager <id>`);
        process.exitCode = 1;
        return;
      }
      console.log(`unit: ${s.unitFile}\nenabled: ${s.enabled ?? 'unknown (systemd not reachable)'}\nactive: ${s.active ?? 'unknown (systemd not reachable)'}\nruns: ${s.exec ?? '?'}`);
      if (s.active !== 'active') process.exitCode = 1;
    });
}

/** Registers every owner verb (the one line src/node/cli.ts has for them). */
export function registerOwnerVerbs(program: Command): void {
  registerControlVerbs(program);
  registerServiceVerbs(program);
}
