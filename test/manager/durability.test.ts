import { afterEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { Manager } from '../../src/manager/manager.js';
import { tempDir } from './helpers.js';

const root = resolve(import.meta.dirname, '../..');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('durability', () => {
  it('kill -9 after acknowledgements loses no channel, task or stored page', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const child = spawn(process.execPath, ['bin/run-ts.js', 'test/manager/fixtures/crash-child.ts', t.dir], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    const acked: string[] = [];
    await new Promise<void>((done, fail) => {
      let buf = '';
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) {
          if (l === 'ready') {
            child.kill('SIGKILL');
            done();
          } else acked.push(l);
        }
      });
      child.on('exit', (code) => code !== null && fail(new Error(`child exited ${code}`)));
    });
    await new Promise((r) => child.once('close', r));
    const m = await Manager.open({ dataDir: t.dir, clock: () => Date.UTC(2026, 0, 1) });
    cleanups.push(() => m.close());
    const channelIds = acked.filter((l) => l.startsWith('acked channel ')).map((l) => l.slice('acked channel '.length));
    expect(channelIds.length).toBe(20);
    for (const id of channelIds) expect((await m.channels.get(id)).id).toBe(id);
    expect(m.sched.size).toBe(20);
    const tasks = acked.find((l) => l.startsWith('acked tasks '))!.slice('acked tasks '.length).split(',');
    const uploaded = acked.find((l) => l.startsWith('acked upload '))!.slice('acked upload '.length);
    for (const id of tasks) expect(m.tasks.isActive(id)).toBe(id !== uploaded);
    const ch = uploaded.split('.')[0]!;
    const pages = await m.pages.latest(ch);
    expect(pages.map((p) => p.text)).toEqual(['stored before the crash']);
    expect((await m.channels.history(ch)).length).toBe(1);
  });

  it('CLI verbs refuse a database held by the server, pointing to the HTTP API', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const m = await Manager.open({ dataDir: t.dir });
    cleanups.push(() => m.close());
    const r = spawnSync(process.execPath, ['bin/dht-manager.js', 'channels', 'add', 'http://x.test/', '--data-dir', t.dir], { cwd: root, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/locked by another process/);
    expect(r.stderr).toMatch(/curl -X POST .*\/api\/channels/);
  });
});
