// The owner in charge of a running `volunteer-crawler join`, as real
// processes: a bad preference file stops join with the key named; status,
// pause, resume and prefs from a second process over the control socket; a bad
// edit while running keeps the last good preferences and says why; an owner's
// pause survives a restart.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OwnerStatus } from '../../src/node/owner-status.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/volunteer-crawler.js');
const MANAGER = '12D3KooWPjVcaCmQJiYib6Q5fkXx1HmJ6ywdeQiqNK9ojJXwZbjp';
let dir: string;
let data: string;
const children: ChildProcess[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vc-own-'));
  data = join(dir, 'd');
});
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const joinArgs = () => ['join', '--first', '--manager', MANAGER, '--lan', '--listen', '/ip4/127.0.0.1/tcp/0', '--no-status', '--cpu-busy-above', '0', '--data-dir', data];

/** Starts join; resolves once the owner control is up, with the process and its stdout so far. */
function startJoin(): Promise<{ proc: ChildProcess; out: () => string }> {
  const proc = spawn(process.execPath, [BIN, ...joinArgs()], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(proc);
  let out = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((ok, fail) => {
    const check = () => {
      if (out.includes('owner control ready')) ok({ proc, out: () => out });
      else if (proc.exitCode !== null) fail(new Error(`join exited ${proc.exitCode}:\n${out}`));
      else setTimeout(check, 50);
    };
    check();
  });
}

function verb(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args, '--data-dir', data], (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}
async function status(): Promise<OwnerStatus> {
  const r = await verb('status', '--json');
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as OwnerStatus;
}
function stop(proc: ChildProcess): Promise<number | null> {
  return new Promise((done) => {
    proc.once('exit', (code) => done(code));
    proc.kill('SIGTERM');
  });
}
async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('volunteer-crawler join under its owner (real processes)', () => {
  it('refuses to start on a bad preference file, naming the key', () => {
    const bad = join(dir, 'bad');
    mkdirSync(bad);
    writeFileSync(join(bad, 'volunteer.toml'), 'threads = "many"\n');
    const r = spawnSync(process.execPath, [BIN, 'join', '--first', '--manager', MANAGER, '--no-status', '--data-dir', bad], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/volunteer\.toml.*threads/);
  }, 90_000);

  it('status, pause, prefs and resume over the socket; a bad edit keeps the last good prefs; the pause survives a restart', async () => {
    let node = await startJoin();
    let s = await status();
    expect(s.state).toBe('running');
    expect(s.prefsFile).toBe(join(data, 'volunteer.toml'));

    // A second node on the same data directory stops at once, before it joins the overlay.
    const second = spawnSync(process.execPath, [BIN, ...joinArgs()], { encoding: 'utf8', timeout: 60_000 });
    expect(second.status).toBe(1);
    expect(second.stderr).toMatch(/a node is already running with .*\/d \(its control socket answers\)/);
    expect(second.stdout + second.stderr).not.toMatch(/loaded identity|node started/); // before the identity and libp2p
    expect((await status()).state).toBe('running'); // the first one's socket is untouched

    const set = await verb('prefs', 'set', 'threads', '3');
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/the running node applied it/);
    const got = JSON.parse((await verb('prefs', 'get', '--json')).stdout) as { threads: number };
    expect(got.threads).toBe(3);

    const p = await verb('pause');
    expect(p.code, p.stderr).toBe(0);
    s = await status();
    expect(s.state).toBe('paused');
    expect(s.reasons).toEqual(['owner']);
    expect(existsSync(join(data, 'run-state.json'))).toBe(true);

    // A bad edit while running: logged, shown by status, the last good preferences stay.
    const good = readFileSync(join(data, 'volunteer.toml'), 'utf8');
    writeFileSync(join(data, 'volunteer.toml'), good.replace(/^threads = 3$/m, 'threads = 0'));
    await until(() => node.out().includes('preference file not valid'), 'the bad edit to be noticed');
    s = await status();
    expect(s.prefsError).toMatch(/threads/);
    expect((JSON.parse((await verb('prefs', 'get', '--json')).stdout) as { threads: number }).threads).toBe(3);
    writeFileSync(join(data, 'volunteer.toml'), good);
    await until(async () => (await status()).prefsError === null, 'the fixed file to be read');

    expect(await stop(node.proc)).toBe(0);
    expect((await verb('status')).code).toBe(3); // no running node

    node = await startJoin();
    s = await status();
    expect(s.state).toBe('paused'); // the owner's pause survived the restart
    expect(s.reasons).toEqual(['owner']);
    const r = await verb('resume');
    expect(r.stdout).toMatch(/^resumed$/m);
    expect((await status()).state).toBe('running');
    expect(await stop(node.proc)).toBe(0);
    // The log file in the data directory has the run's lines too.
    expect(readFileSync(join(data, 'volunteer.log'), 'utf8')).toMatch(/owner control ready/);
  }, 180_000);
});
