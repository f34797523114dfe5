// `service install | uninstall | status` against a temp HOME with systemctl
// and loginctl replaced by a recording runner; and the size-bounded log.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RotatingFile } from '../../src/node/log-file.js';
import { installService, renderUnit, serviceStatus, systemdWord, uninstallService, unitPath, type Runner, type ServiceEnv } from '../../src/node/service.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'volcrawl-home-'));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

/** A runner that records calls and answers from a script keyed by "cmd arg arg". */
function fakeRunner(answers: Record<string, { code: number; stdout?: string; stderr?: string }> = {}): { run: Runner; calls: string[] } {
  const calls: string[] = [];
  const run: Runner = async (cmd, args) => {
    const line = [cmd, ...args].join(' ');
    calls.push(line);
    const a = answers[line] ?? { code: 0 };
    return { code: a.code, stdout: a.stdout ?? '', stderr: a.stderr ?? '' };
  };
  return { run, calls };
}

const env = (run: Runner, platform: NodeJS.Platform = 'linux'): ServiceEnv => ({ platform, home, user: 'alice', execPath: '/usr/bin/node', script: '/opt/volcrawl/bin/volunteer-crawler.js', run });
const ARGS = ['/ip4/192.0.2.1/tcp/4001/p2p/12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA', '--manager', '12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA', '--data-dir', '/home/alice/my data/100%', '--no-status'];

describe('the systemd user service', () => {
  it('writes the unit under $HOME/.config/systemd/user, reloads, enables and starts it, and advises lingering', async () => {
    const { run, calls } = fakeRunner({ 'loginctl show-user alice --property=Linger': { code: 0, stdout: 'Linger=no\n' } });
    const r = await installService(env(run), ARGS, '/home/alice/my data/100%', '/opt/volcrawl/docs/volunteer.md');
    const file = join(home, '.config/systemd/user/volcrawl.service');
    expect(r.unitFile).toBe(file);
    expect(r.enabled).toBe(true);
    expect(calls).toEqual(['systemctl --user daemon-reload', 'systemctl --user enable --now volcrawl.service', 'loginctl show-user alice --property=Linger']);
    expect(r.messages.some((m) => m.includes('sudo loginctl enable-linger alice'))).toBe(true);
    const unit = readFileSync(file, 'utf8');
    expect(unit).toContain(
      'ExecStart=/usr/bin/node --max-semi-space-size=2 /opt/volcrawl/bin/volunteer-crawler.js join /ip4/192.0.2.1/tcp/4001/p2p/12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA --manager 12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA --data-dir "/home/alice/my data/100%%" --no-status\n',
    );
    expect(unit).toContain('WorkingDirectory=/home/alice/my data/100%%\n');
    for (const line of ['Environment=MALLOC_ARENA_MAX=2', 'Restart=on-failure', 'Nice=19', 'IOSchedulingClass=idle', 'KillSignal=SIGTERM', 'WantedBy=default.target', 'Documentation=file:///opt/volcrawl/docs/volunteer.md']) expect(unit).toContain(`${line}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o644);
  });

  it('honours $XDG_CONFIG_HOME and says nothing about lingering when it is on', async () => {
    const { run } = fakeRunner({ 'loginctl show-user alice --property=Linger': { code: 0, stdout: 'Linger=yes\n' } });
    const e = { ...env(run), xdgConfigHome: join(home, 'cfg') };
    const r = await installService(e, ARGS, '/d');
    expect(r.unitFile).toBe(join(home, 'cfg/systemd/user/volcrawl.service'));
    expect(r.messages.some((m) => m.includes('enable-linger'))).toBe(false);
  });

  it('without a reachable user manager: the unit is written and the owner is told how to finish', async () => {
    const { run, calls } = fakeRunner({ 'systemctl --user daemon-reload': { code: 1, stderr: 'Failed to connect to bus: No medium found' } });
    const r = await installService(env(run), ARGS, '/d');
    expect(r.enabled).toBe(false);
    expect(existsSync(r.unitFile)).toBe(true);
    expect(calls).toEqual(['systemctl --user daemon-reload']);
    expect(r.messages.join('\n')).toMatch(/could not reach systemd's user manager \(Failed to connect to bus: No medium found\)[\s\S]*systemctl --user enable --now volcrawl\.service[\s\S]*sudo loginctl enable-linger alice/);
  });

  it('reports status and uninstalls', async () => {
    const { run, calls } = fakeRunner({
      'systemctl --user is-enabled volcrawl.service': { code: 0, stdout: 'enabled\n' },
      'systemctl --user is-active volcrawl.service': { code: 0, stdout: 'active\n' },
    });
    expect((await serviceStatus(env(run))).installed).toBe(false);
    await installService(env(run), ARGS, '/d');
    const s = await serviceStatus(env(run));
    expect(s).toMatchObject({ installed: true, enabled: 'enabled', active: 'active' });
    expect(s.exec).toMatch(/^\/usr\/bin\/node .* join /);
    calls.length = 0;
    const msgs = await uninstallService(env(run));
    expect(calls).toEqual(['systemctl --user disable --now volcrawl.service', 'systemctl --user daemon-reload']);
    expect(msgs.at(-1)).toBe(`removed ${unitPath({ home })}`);
    expect(existsSync(unitPath({ home }))).toBe(false);
    expect(await uninstallService(env(run))).toEqual([`no volcrawl.service installed (${unitPath({ home })} does not exist)`]);
  });

  it('on other platforms: a clear message with the manual steps, and nothing written', async () => {
    const { run, calls } = fakeRunner();
    await expect(installService(env(run, 'darwin'), ARGS, '/d')).rejects.toThrow(/only automated on Linux .* launchd agent .* docs\/volunteer\.md/);
    await expect(serviceStatus(env(run, 'win32'))).rejects.toThrow(/Task Scheduler/);
    expect(calls).toEqual([]);
    expect(readdirSync(home)).toEqual([]);
  });

  it('quotes ExecStart words the way systemd splits them', () => {
    expect(systemdWord('/plain/path-1.js')).toBe('/plain/path-1.js');
    expect(systemdWord('a b')).toBe('"a b"');
    expect(systemdWord('50%')).toBe('50%%');
    expect(systemdWord('$HOME')).toBe('"$$HOME"');
    expect(systemdWord('say "hi"\\')).toBe('"say \\"hi\\"\\\\"');
    expect(systemdWord('')).toBe('""');
    expect(() => systemdWord('a\nExecStartPre=/bin/evil')).toThrow(/line break/);
    expect(() => renderUnit({ execPath: '/n', script: '/s', joinArgs: [], dataDir: '/d\n[Service]' })).toThrow(/line break/);
  });
});

describe('the log file', () => {
  it('rotates by size, keeps a bounded number of files, and takes pino lines', () => {
    const path = join(home, 'volunteer.log');
    const out = new RotatingFile({ path, maxBytes: 1000, keep: 2 });
    const log = pino({ base: null, timestamp: false }, out);
    for (let i = 0; i < 200; i++) log.info({ i }, 'a line of about sixty bytes, padded to be sure');
    out.close();
    const files = readdirSync(home).sort();
    expect(files).toEqual(['volunteer.log', 'volunteer.log.1', 'volunteer.log.2']);
    for (const f of files) expect(statSync(join(home, f)).size).toBeLessThanOrEqual(1000);
    const last = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { i: number });
    expect(last.at(-1)!.i).toBe(199);
    const older = readFileSync(`${path}.1`, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { i: number });
    expect(older.at(-1)!.i).toBe(last[0]!.i - 1); // nothing lost between the current file and the last rotated one
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // Reopened, it appends to the current file.
    const again = new RotatingFile({ path, maxBytes: 1000, keep: 2 });
    const size = statSync(path).size;
    again.write('{"x":1}\n');
    again.close();
    expect(statSync(path).size).toBe(size + 8);
  });
});
