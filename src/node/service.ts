// `volunteer-crawler service install | uninstall | status`: run the volunteer
// as a systemd user service on Linux (starts with the owner's session, or at
// boot with lingering enabled; restarts after a crash; lowest CPU and I/O
// priority). The unit file is written atomically; systemctl and loginctl are
// called through an injectable runner, so tests need no systemd. Other
// platforms get a clear message and the manual steps (docs/volunteer.md).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-file.js';
import { VOLUNTEER_NODE_ENV, VOLUNTEER_NODE_FLAGS } from './runtime-flags.js';

export const UNIT_NAME = 'volcrawl.service';

export type Runner = (cmd: string, args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;

/** Runs a command, never throws: a missing program is code 127. */
export const execRunner: Runner = (cmd, args) =>
  new Promise((resolve) => {
    execFile(cmd, args, { timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : err.code === 'ENOENT' ? 127 : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr || (err && !stdout ? err.message : '')) });
    });
  });

export interface ServiceEnv {
  platform: NodeJS.Platform;
  /** $HOME and $XDG_CONFIG_HOME, for the unit's place. */
  home: string;
  xdgConfigHome?: string | undefined;
  user: string;
  /** The node binary and the volunteer-crawler script the unit runs. */
  execPath: string;
  script: string;
  run: Runner;
}

export function defaultServiceEnv(script: string): ServiceEnv {
  return { platform: process.platform, home: homedir(), xdgConfigHome: process.env.XDG_CONFIG_HOME, user: userInfo().username, execPath: process.execPath, script, run: execRunner };
}

export class ServiceError extends Error {
  override name = 'ServiceError';
}

export function unitPath(env: Pick<ServiceEnv, 'home' | 'xdgConfigHome'>): string {
  const base = env.xdgConfigHome ? env.xdgConfigHome : join(env.home, '.config');
  return join(base, 'systemd', 'user', UNIT_NAME);
}

/** One ExecStart word: "%" and "$" escaped for systemd, quoted when it holds anything but plain characters. */
export function systemdWord(a: string): string {
  if (/[\0\r\n]/.test(a)) throw new ServiceError(`an argument contains a line break or NUL: ${JSON.stringify(a)}`);
  const s = a.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  if (s !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** A path setting (not a command line): no quoting, only "%" escaped. */
function systemdPath(p: string): string {
  if (/[\0\r\n]/.test(p)) throw new ServiceError(`a path contains a line break or NUL: ${JSON.stringify(p)}`);
  return p.replace(/%/g, '%%');
}

/** The unit: `volunteer-crawler join <args>` at the lowest priority, restarted on failure, stopped with SIGTERM (tasks handed on). */
export function renderUnit(o: { execPath: string; script: string; joinArgs: string[]; dataDir: string; docs?: string }): string {
  const exec = [o.execPath, ...VOLUNTEER_NODE_FLAGS, o.script, 'join', ...o.joinArgs].map(systemdWord).join(' ');
  return [
    '# Written by `volunteer-crawler service install`; remove with `volunteer-crawler service uninstall`.',
    '[Unit]',
    'Description=volcrawl volunteer: lends this computer to a peer-to-peer web crawl',
    ...(o.docs ? [`Documentation=file://${o.docs}`] : []),
    '',
    '[Service]',
    'Type=simple',
    '# Node runs the volunteer as its executable does (src/node/runtime-flags.ts).',
    ...Object.entries(VOLUNTEER_NODE_ENV).map(([k, v]) => `Environment=${k}=${v}`),
    `ExecStart=${exec}`,
    `WorkingDirectory=${systemdPath(o.dataDir)}`,
    'Restart=on-failure',
    'RestartSec=30',
    '# SIGTERM makes the node hand its tasks to other volunteers before it leaves.',
    'KillSignal=SIGTERM',
    'TimeoutStopSec=60',
    '# A guest on this computer: the lowest CPU and I/O priority.',
    'Nice=19',
    'IOSchedulingClass=idle',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

const MANUAL: Partial<Record<NodeJS.Platform, string>> = {
  darwin: 'macOS: create a launchd agent (~/Library/LaunchAgents/org.volcrawl.volunteer.plist) that runs the join command, then `launchctl load` it',
  win32: 'Windows: create a Task Scheduler task "at log on" that runs the join command',
};

function unsupported(env: ServiceEnv): ServiceError {
  const how = MANUAL[env.platform] ?? `${env.platform}: start the join command from your system's service manager or at login`;
  return new ServiceError(`service install is only automated on Linux (systemd) so far. ${how}; docs/volunteer.md ("Running as a service") has the step-by-step.`);
}

/** systemctl --user, with a clear message when the user manager is not reachable. */
async function systemctl(env: ServiceEnv, args: string[]): Promise<{ ok: boolean; out: string }> {
  const r = await env.run('systemctl', ['--user', ...args]);
  return { ok: r.code === 0, out: (r.stdout + r.stderr).trim() };
}

export interface InstallResult {
  unitFile: string;
  /** What to tell the owner, line by line. */
  messages: string[];
  /** False when the unit was written but could not be enabled: the messages say how to finish. */
  enabled: boolean;
}

/** Writes the unit, reloads systemd, enables and starts it; advises lingering when the user has none. */
export async function installService(env: ServiceEnv, joinArgs: string[], dataDir: string, docs?: string): Promise<InstallResult> {
  if (env.platform !== 'linux') throw unsupported(env);
  const unitFile = unitPath(env);
  const text = renderUnit({ execPath: env.execPath, script: env.script, joinArgs, dataDir, ...(docs ? { docs } : {}) });
  writeFileAtomic(unitFile, text, 0o644);
  const messages = [`wrote ${unitFile}`];
  const reload = await systemctl(env, ['daemon-reload']);
  const enable = reload.ok ? await systemctl(env, ['enable', '--now', UNIT_NAME]) : reload;
  if (!enable.ok) {
    messages.push(
      `could not reach systemd's user manager (${enable.out.split('\n')[0] || 'systemctl failed'}).`,
      `In a desktop session, run: systemctl --user daemon-reload && systemctl --user enable --now ${UNIT_NAME}`,
      `Over ssh or without a session, first: sudo loginctl enable-linger ${env.user}`,
    );
    return { unitFile, messages, enabled: false };
  }
  messages.push(`enabled and started ${UNIT_NAME}: it starts with your session and restarts after a crash`);
  const linger = await env.run('loginctl', ['show-user', env.user, '--property=Linger']);
  if (linger.code === 0 && /Linger=no/.test(linger.stdout)) {
    messages.push(`to run it while you are logged out and from boot: sudo loginctl enable-linger ${env.user}`);
  }
  messages.push(`check it: volunteer-crawler service status; volunteer-crawler status; logs: journalctl --user -u ${UNIT_NAME}`);
  return { unitFile, messages, enabled: true };
}

/** Stops, disables and removes the unit (the node hands its tasks on as it stops). */
export async function uninstallService(env: ServiceEnv): Promise<string[]> {
  if (env.platform !== 'linux') throw unsupported(env);
  const unitFile = unitPath(env);
  if (!existsSync(unitFile)) return [`no ${UNIT_NAME} installed (${unitFile} does not exist)`];
  const messages: string[] = [];
  const stop = await systemctl(env, ['disable', '--now', UNIT_NAME]);
  if (!stop.ok) messages.push(`systemctl --user disable --now ${UNIT_NAME} failed (${stop.out.split('\n')[0] ?? ''}); the unit file is removed anyway`);
  rmSync(unitFile, { force: true });
  await systemctl(env, ['daemon-reload']);
  messages.push(`removed ${unitFile}`);
  return messages;
}

export interface ServiceStatus {
  installed: boolean;
  unitFile: string;
  /** systemctl is-enabled / is-active answers, or null when systemd could not be asked. */
  enabled: string | null;
  active: string | null;
  /** The ExecStart line, for the owner to see what runs. */
  exec: string | null;
}

export async function serviceStatus(env: ServiceEnv): Promise<ServiceStatus> {
  if (env.platform !== 'linux') throw unsupported(env);
  const unitFile = unitPath(env);
  const installed = existsSync(unitFile);
  const exec = installed ? (/^ExecStart=(.*)$/m.exec(readFileSync(unitFile, 'utf8'))?.[1] ?? null) : null;
  const ask = async (verb: string) => {
    const r = await env.run('systemctl', ['--user', verb, UNIT_NAME]);
    const out = r.stdout.trim();
    return r.code === 127 || out === '' ? null : out;
  };
  return { installed, unitFile, enabled: await ask('is-enabled'), active: await ask('is-active'), exec };
}
