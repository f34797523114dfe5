// The control socket: owner-only permissions (another user is refused by the
// kernel), a bounded line-delimited JSON protocol, stale sockets, and the
// owner's verbs as real processes.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONTROL_LIMITS, ControlServer, controlRequest, NoNodeError, socketPath, type ControlHandler } from '../../src/node/control.js';
import type { OwnerStatus } from '../../src/node/owner-status.js';

let base: string;
let dataDir: string;
const servers: ControlServer[] = [];
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'volcrawl-ctl-'));
  chmodSync(base, 0o755); // traversable by others, so only the data directory's and the socket's modes keep them out
  dataDir = join(base, 'data');
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  rmSync(base, { recursive: true, force: true });
});

/** A handler that records what it was asked. */
function recorder(): ControlHandler & { calls: unknown[][] } {
  const calls: unknown[][] = [];
  return {
    calls,
    status: () => (calls.push(['status']), { state: 'running' }),
    pause: (forMs) => (calls.push(['pause', forMs]), { state: 'paused' }),
    resume: () => (calls.push(['resume']), { state: 'running' }),
    prefsGet: () => (calls.push(['prefs.get']), { file: 'f', prefs: {}, error: null }),
    prefsSet: (key, value) => {
      calls.push(['prefs.set', key, value]);
      if (key === 'bad') throw new Error('bad: unknown key');
      return { ok: true };
    },
  };
}

async function start(h: ControlHandler = recorder()): Promise<ControlServer> {
  const s = await ControlServer.start(dataDir, h);
  servers.push(s);
  return s;
}

/** Sends raw bytes and collects the reply lines until the server closes or `lines` arrive. */
function raw(payload: string | Buffer, lines = 1): Promise<string[]> {
  return new Promise((done) => {
    const out: string[] = [];
    let buf = '';
    const s = createConnection(socketPath(dataDir));
    s.setEncoding('utf8');
    s.on('connect', () => s.write(payload));
    s.on('data', (c: string) => {
      buf += c;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        out.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
      if (out.length >= lines) s.destroy();
    });
    s.on('close', () => done(out));
    s.on('error', () => undefined);
  });
}

describe('the control socket', () => {
  it('is a 0600 socket in a 0700 directory, and carries each request to the handler', async () => {
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const h = recorder();
    const s = await start(h);
    expect(s.note).toMatch(/was readable by others \(mode 755\); made it 0700/);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(s.path).isSocket()).toBe(true);
    expect(statSync(s.path).mode & 0o777).toBe(0o600);
    expect(await controlRequest(dataDir, { cmd: 'status' })).toEqual({ state: 'running' });
    expect(await controlRequest(dataDir, { cmd: 'pause', forMs: 7_200_000 })).toEqual({ state: 'paused' });
    await controlRequest(dataDir, { cmd: 'pause' });
    await controlRequest(dataDir, { cmd: 'resume' });
    await controlRequest(dataDir, { cmd: 'prefs.get' });
    await controlRequest(dataDir, { cmd: 'prefs.set', key: 'threads', value: '2' });
    await expect(controlRequest(dataDir, { cmd: 'prefs.set', key: 'bad', value: '1' })).rejects.toThrow('bad: unknown key');
    expect(h.calls).toEqual([['status'], ['pause', 7_200_000], ['pause', undefined], ['resume'], ['prefs.get'], ['prefs.set', 'threads', '2'], ['prefs.set', 'bad', '1']]);
  });

  it('answers bad input with an error and keeps serving; closes on an oversized line', async () => {
    const h = recorder();
    await start(h);
    const replies = await raw('not json\n{"cmd":"reboot"}\n{"cmd":"pause","forMs":-5}\n{"cmd":"status","extra":1}\n{"id":7,"cmd":"status"}\n', 5);
    expect(replies.map((r) => JSON.parse(r) as { ok: boolean; error?: string; id?: number })).toEqual([
      { ok: false, error: 'not JSON: one JSON object per line' },
      { ok: false, error: expect.stringMatching(/^bad request: cmd: /) },
      { ok: false, error: expect.stringMatching(/^bad request: forMs: /) },
      { ok: false, error: expect.stringMatching(/^bad request: .*extra/) },
      { id: 7, ok: true, result: { state: 'running' } },
    ]);
    const big = await raw(Buffer.alloc(CONTROL_LIMITS.requestBytes + 10, 0x61));
    expect(JSON.parse(big[0] as string)).toEqual({ ok: false, error: `request larger than ${CONTROL_LIMITS.requestBytes} bytes` });
    expect(h.calls).toEqual([['status']]);
  });

  it('says "no running node" when none listens, takes over a dead node\'s socket, refuses a second node', async () => {
    await expect(controlRequest(dataDir, { cmd: 'status' })).rejects.toThrow(new NoNodeError(dataDir));
    // A node killed with SIGKILL leaves its socket file behind.
    mkdirSync(dataDir, { mode: 0o700 });
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socketPath(dataDir))}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise((r) => child.stdout.once('data', r));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(existsSync(socketPath(dataDir))).toBe(true);
    await expect(controlRequest(dataDir, { cmd: 'status' })).rejects.toBeInstanceOf(NoNodeError);
    await start();
    expect(await controlRequest(dataDir, { cmd: 'status' })).toEqual({ state: 'running' });
    await expect(ControlServer.start(dataDir, recorder())).rejects.toThrow(/a node is already running with .*data/);
  });

  const root = process.getuid?.() === 0 && spawnSync('useradd', ['--help']).status === 0;
  it.runIf(root)('refuses another user, even when the data directory is opened up', async () => {
    await start();
    const user = `volc${process.pid % 100000}`;
    spawnSync('userdel', [user]);
    expect(spawnSync('useradd', ['-M', '-N', '-s', '/usr/sbin/nologin', user]).status).toBe(0);
    try {
      const tryAs = () =>
        new Promise<string>((done) => {
          const code = `require('net').createConnection(${JSON.stringify(socketPath(dataDir))}).on('connect', () => { console.log('CONNECTED'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(0) })`;
          execFile('runuser', ['-u', user, '--', process.execPath, '-e', code], (_e, stdout) => done(stdout.trim()));
        });
      expect(await tryAs()).toBe('EACCES'); // the 0700 directory
      chmodSync(dataDir, 0o755);
      expect(await tryAs()).toBe('EACCES'); // the 0600 socket
      expect(await controlRequest(dataDir, { cmd: 'status' })).toEqual({ state: 'running' }); // the owner still can
    } finally {
      spawnSync('userdel', [user]);
    }
  });
});

describe('the owner\'s verbs', () => {
  const cli = (args: string[]) =>
    new Promise<{ code: number | null; out: string; err: string }>((done) => {
      execFile(process.execPath, [resolve('bin/volunteer-crawler.js'), ...args, '--data-dir', dataDir], { timeout: 60_000 }, (e, out, err) => done({ code: e ? ((e as { code?: number }).code ?? 1) : 0, out, err }));
    });

  it('pause --for 2h and status reach the running node; with none, status says so and exits 3', async () => {
    const none = await cli(['status']);
    expect(none.code).toBe(3);
    expect(none.err).toContain(`no running node in ${dataDir}`);
    const h = recorder();
    const day = { down: 1_500_000, up: 20_000, tasks: 4, pages: 120, onlineMs: 3_600_000, activeMs: 1_800_000 };
    h.status = () => {
      const s: OwnerStatus = { peerId: '12D3KooTest', dataDir, state: 'paused', since: Date.now() - 120_000, reasons: ['owner'], details: ['owner: paused by the owner for 2 h 0 min more'], notes: [], tasks: { running: 0, queued: 0 }, remaining: { day: null, month: 5e9 }, today: day, thisMonth: day, history: [{ day: '2026-06-01', ...day }], prefsFile: join(dataDir, 'volunteer.toml'), prefsError: null };
      return s;
    };
    await start(h);
    const paused = await cli(['pause', '--for', '2h']);
    expect(paused).toMatchObject({ code: 0, out: 'paused for 120 min\n' });
    expect(h.calls).toEqual([['pause', 7_200_000]]);
    const st = await cli(['status']);
    expect(st.code).toBe(0);
    expect(st.out).toMatch(/^paused \(owner\) for 2 min — peer 12D3KooTest\n {2}owner: paused by the owner for 2 h 0 min more\n/);
    expect(st.out).toContain('transfer today 1.5 MB (no cap), this month 1.5 MB (5.00 GB left)');
    expect(st.out).toMatch(/2026-06-01\s+4\s+120\s+1\.5 MB\s+1\.0 h\s+0\.5 h/);
  });
});
