// `dht-manager serve` as a process: prints the join command, answers the API,
// holds due channels while no volunteer is online, stops on SIGTERM with exit 0
// and releases the database.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { tempDir } from './helpers.js';
import { waitFor } from '../../testbed/net/harness.js';

const root = resolve(import.meta.dirname, '../..');
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** Starts `dht-manager serve` on loopback with free ports; resolves once it printed the join command. */
async function startServe(dir: string, more: string[]): Promise<{ child: ChildProcess; banner: string; api: string }> {
  const child = spawn(process.execPath, ['bin/dht-manager.js', 'serve', '--data-dir', dir, '--listen', '/ip4/127.0.0.1/tcp/0', '--http-port', '0', '--lan', ...more], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(() => child.kill('SIGKILL'));
  let err = '';
  const banner = await new Promise<string>((done, fail) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (/volunteer-crawler join \S+ --manager \S+\n/.test(err)) done(err);
    });
    child.on('exit', (code) => fail(new Error(`serve exited ${code}: ${err}`)));
  });
  return { child, banner, api: /operator API (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)![1]! };
}

/** SIGTERM; resolves with the exit code. */
function stop(child: ChildProcess): Promise<number | null> {
  return new Promise<number | null>((done) => {
    child.once('exit', (c) => done(c));
    child.kill('SIGTERM');
  });
}

describe('dht-manager serve', () => {
  it('prints the volunteer join command, serves the API, and stops gracefully', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const { child, banner, api } = await startServe(t.dir, ['--strategy', 'icr', '--tick', '10', '--log-level', 'warn']);
    const join = /volunteer-crawler join (\/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\/(\w+)) --manager (\w+)/.exec(banner)!;
    expect(join[2]).toBe(join[3]);
    const status = (await (await fetch(`${api}/api/status`)).json()) as { peerId: string; strategy: string; rateCap: number };
    expect(status.peerId).toBe(join[3]);
    expect(status.strategy).toBe('icr');
    expect(status.rateCap).toBe(2);
    const add = await fetch(`${api}/api/channels`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: 'http://svc.test/' }) });
    expect(add.status).toBe(201);
    // No volunteer has joined: the due channel waits instead of failing task after task.
    type Status = { tasks: { queued: number }; counters: { tasksIssued: number; tasksFailed: number } };
    const st = async () => (await (await fetch(`${api}/api/status`)).json()) as Status;
    await waitFor(async () => (await st()).tasks.queued === 1, 30_000, 'the channel to be due');
    await new Promise((r) => setTimeout(r, 500)); // 50 scheduler steps at --tick 10
    expect((await st()).counters).toMatchObject({ tasksIssued: 0, tasksFailed: 0 });
    expect((await st()).tasks.queued).toBe(1);
    expect(await stop(child)).toBe(0);
    // the lock is released and the channel persisted; the identity is kept
    const list = spawnSync(process.execPath, ['bin/dht-manager.js', 'channels', 'list', '--data-dir', t.dir], { cwd: root, encoding: 'utf8' });
    expect(list.status).toBe(0);
    expect(list.stdout).toContain('http://svc.test');
  }, 90_000);

  it('--rate-cap off starts without a cap', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const { child, api } = await startServe(t.dir, ['--rate-cap', 'off', '--log-level', 'warn']);
    const status = (await (await fetch(`${api}/api/status`)).json()) as { rateCap: number | null };
    expect(status.rateCap).toBeNull();
    expect(await stop(child)).toBe(0);
  }, 60_000);

  it('--help lists the flags; bad flags are usage errors', () => {
    const h = spawnSync(process.execPath, ['bin/dht-manager.js', 'serve', '--help'], { cwd: root, encoding: 'utf8' });
    expect(h.status).toBe(0);
    for (const f of ['--data-dir', '--listen', '--http-port', '--strategy', '--rate-cap', '--time-scale']) expect(h.stdout).toContain(f);
    const bad = spawnSync(process.execPath, ['bin/dht-manager.js', 'serve', '--strategy', 'fastest'], { cwd: root, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/must be one of fixed, iir, icr/);
    const host = spawnSync(process.execPath, ['bin/dht-manager.js', 'serve', '--allowed-host', 'a b'], { cwd: root, encoding: 'utf8' });
    expect(host.status).toBe(2);
    expect(host.stderr).toMatch(/--allowed-host.*expected a host name or name:port \(got "a b"\)/);
  });

  it('CAF is the default (--help says so); a database stored under ICR switches to it at the next start', async () => {
    const h = spawnSync(process.execPath, ['bin/dht-manager.js', 'serve', '--help'], { cwd: root, encoding: 'utf8' });
    expect(h.stdout).toMatch(/--strategy <name>\s+recrawl strategy: fixed \| iir \| icr \| caf[^]*\(default: "caf"\)/);
    const t = tempDir();
    cleanups.push(t.cleanup);
    const status = async (api: string) => (await (await fetch(`${api}/api/status`)).json()) as { strategy: string };
    const icr = await startServe(t.dir, ['--strategy', 'icr', '--log-level', 'warn']);
    expect((await status(icr.api)).strategy).toBe('icr');
    expect(await stop(icr.child)).toBe(0);
    const caf = await startServe(t.dir, ['--log-level', 'warn']);
    expect((await status(caf.api)).strategy).toBe('caf');
    expect(await stop(caf.child)).toBe(0);
  }, 90_000);
});
