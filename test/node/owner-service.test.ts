// The owner's control of a node, in process with a stand-in node: a spent
// transfer cap pauses it (tasks handed on) and a raised cap over the control
// socket resumes it; an owner's pause is persisted and a new run starts paused.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { controlRequest } from '../../src/node/control.js';
import type { VolunteerNode } from '../../src/node/node.js';
import { CpuMonitor } from '../../src/node/os-probe.js';
import { OwnerControl } from '../../src/node/owner-service.js';
import type { OwnerStatus } from '../../src/node/owner-status.js';
import { loadPrefsFile, prefsPath, setPrefInFile } from '../../src/node/prefs.js';

let dir: string;
const stops: (() => Promise<void> | void)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vc-osvc-'));
});
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
  rmSync(dir, { recursive: true, force: true });
});

/** A node that records pause (false) and resume (true). */
function fakeNode(): VolunteerNode & { calls: boolean[] } {
  const calls: boolean[] = [];
  return {
    calls,
    peerId: '12D3KooWtest',
    runner: { load: () => ({ running: 0, queued: 0, free: 10 }) },
    takeTasks: async (on: boolean) => {
      calls.push(on);
      return { migrated: [], lost: [] };
    },
  } as unknown as VolunteerNode & { calls: boolean[] };
}

async function startOwner(node = fakeNode()): Promise<{ owner: OwnerControl; node: ReturnType<typeof fakeNode> }> {
  const owner = new OwnerControl({
    dataDir: dir,
    overrides: {},
    log: pino({ level: 'silent' }),
    tickMs: 3_600_000, // decisions come from the cap and the socket here, not the clock
    prefsPollMs: 100,
    // An idle computer on mains power.
    probes: (windowMs) => ({ cpu: new CpuMonitor({ windowMs, read: () => ({ known: true, value: { total: 1000, busy: 0, self: 0 } }) }), power: () => ({ known: true, value: 'ac' }) }),
  });
  const svc = owner.service(node);
  await svc.start();
  stops.push(() => svc.stop?.());
  return { owner, node };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > 30_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the owner service', () => {
  it('a spent cap pauses the node at once; raising it over the socket resumes it', async () => {
    loadPrefsFile(prefsPath(dir));
    setPrefInFile(prefsPath(dir), 'transfer.daily_cap', '"10k"');
    const { owner, node } = await startOwner();
    expect(owner.paused).toBe(false);
    const room = owner.budget.reserve(5000);
    expect(room).not.toBeNull();
    room!.settle(9000, 2000); // over the cap by less than the reservation
    expect(owner.budget.reserve(5000)).toBeNull();
    owner.budgetSpent(); // what a waiting crawler thread says
    await until(() => node.calls.includes(false), 'the pause');
    const s = (await controlRequest(dir, { cmd: 'status' })) as OwnerStatus;
    expect(s.state).toBe('paused');
    expect(s.reasons).toEqual(['cap']);
    expect(s.today.down + s.today.up).toBe(11_000);
    await controlRequest(dir, { cmd: 'prefs.set', key: 'transfer.daily_cap', value: '"1M"' });
    await until(() => node.calls.at(-1) === true, 'the resume');
    expect(((await controlRequest(dir, { cmd: 'status' })) as OwnerStatus).state).toBe('running');
    expect(owner.budget.reserve(5000)).not.toBeNull();
  });

  it("an owner's pause is persisted: the next run starts paused until resumed", async () => {
    const first = await startOwner();
    const p = (await controlRequest(dir, { cmd: 'pause' })) as OwnerStatus;
    expect(p.reasons).toEqual(['owner']);
    expect(first.node.calls).toEqual([false]);
    await stops.pop()!();
    const { owner, node } = await startOwner();
    expect(owner.paused).toBe(true); // before the node takes anything
    expect(node.calls).toEqual([false]);
    const r = (await controlRequest(dir, { cmd: 'resume' })) as OwnerStatus;
    expect(r.state).toBe('running');
    expect(node.calls).toEqual([false, true]);
  });
});
