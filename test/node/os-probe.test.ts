// The OS probes on fake /proc and /sys trees (and once on the real /proc).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CpuMonitor, readCpuTimes, readPower } from '../../src/node/os-probe.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'volcrawl-probe-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function put(rel: string, text: string): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
}

/** /proc/stat and /proc/self/stat with the given tick counts. */
function procAt(c: { user: number; system: number; idle: number; iowait?: number; selfUser: number; selfSys: number; comm?: string }): void {
  put('proc/stat', `cpu  ${c.user} 0 ${c.system} ${c.idle} ${c.iowait ?? 0} 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 1 2 3\n`);
  put('proc/self/stat', `4242 (${c.comm ?? 'node'}) S 1 4242 4242 0 -1 4194304 98 0 0 0 ${c.selfUser} ${c.selfSys} 0 0 20 0 11 0 250246 3133440 414\n`);
}

describe('CPU use of other programs', () => {
  it('subtracts our own CPU time, as a share of all cores', () => {
    procAt({ user: 1000, system: 500, idle: 8500, selfUser: 10, selfSys: 10 });
    expect(readCpuTimes({ root, platform: 'linux' })).toEqual({ known: true, value: { total: 10_000, busy: 1500, self: 20 } });
    let t = 0;
    const mon = new CpuMonitor({ root, platform: 'linux', windowMs: 60_000, now: () => t });
    mon.sample();
    expect(mon.otherPercent()).toMatchObject({ known: false, why: expect.stringMatching(/^warming up/) });
    // One minute later: 6000 ticks passed, 3000 of them busy, 1200 of those ours → others used 30%.
    t = 60_000;
    procAt({ user: 3000, system: 1500, idle: 11_500, selfUser: 1000, selfSys: 220 });
    mon.sample();
    const r = mon.otherPercent();
    expect(r.known && r.value).toBeCloseTo(30, 6);
  });

  it('averages over the trailing window only', () => {
    let t = 0;
    let ticks = { busy: 0, idle: 0 };
    const mon = new CpuMonitor({ windowMs: 10_000, now: () => t, read: () => ({ known: true, value: { total: ticks.busy + ticks.idle, busy: ticks.busy, self: 0 } }) });
    // 30 s fully busy, then 10 s idle: the 10 s window sees only the idle part.
    for (let s = 0; s <= 40; s++) {
      t = s * 1000;
      if (s > 0 && s <= 30) ticks = { busy: ticks.busy + 100, idle: ticks.idle };
      if (s > 30) ticks = { busy: ticks.busy, idle: ticks.idle + 100 };
      mon.sample();
      if (s === 30) expect(mon.otherPercent()).toEqual({ known: true, value: 100 });
    }
    expect(mon.otherPercent()).toEqual({ known: true, value: 0 });
  });

  it('reads the fields after the last ")" of a command name with spaces and parentheses', () => {
    procAt({ user: 10, system: 10, idle: 80, selfUser: 7, selfSys: 3, comm: 'my (odd) prog) x' });
    expect(readCpuTimes({ root, platform: 'linux' })).toEqual({ known: true, value: { total: 100, busy: 20, self: 10 } });
  });

  it('says unknown, and why, instead of guessing', () => {
    expect(readCpuTimes({ root, platform: 'darwin' })).toEqual({ known: false, why: 'CPU use is not read on darwin yet (only Linux is supported)' });
    expect(readCpuTimes({ root, platform: 'linux' })).toMatchObject({ known: false, why: expect.stringMatching(/cannot read .*proc\/stat: ENOENT/) });
    put('proc/stat', 'intr 1 2 3\n');
    put('proc/self/stat', '1 (x) S');
    expect(readCpuTimes({ root, platform: 'linux' })).toEqual({ known: false, why: '/proc/stat has no readable "cpu" line' });
    const mon = new CpuMonitor({ root, platform: 'win32', windowMs: 1000 });
    mon.sample();
    expect(mon.otherPercent()).toEqual({ known: false, why: 'CPU use is not read on win32 yet (only Linux is supported)' });
  });

  it.runIf(process.platform === 'linux')('reads the real /proc and sees our own CPU time grow', () => {
    const a = readCpuTimes();
    expect(a.known).toBe(true);
    const until = performance.now() + 300;
    let x = 0;
    while (performance.now() < until) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    const b = readCpuTimes();
    if (!a.known || !b.known) throw new Error('unreadable');
    expect(b.value.self).toBeGreaterThan(a.value.self);
    expect(b.value.total).toBeGreaterThanOrEqual(a.value.total);
  });
});

describe('the power source', () => {
  function supply(name: string, attrs: Record<string, string>): void {
    for (const [k, v] of Object.entries(attrs)) put(`sys/class/power_supply/${name}/${k}`, `${v}\n`);
  }
  const read = () => readPower({ root, platform: 'linux' });

  it('a laptop plugged in is on AC, unplugged on battery', () => {
    supply('AC', { type: 'Mains', online: '1' });
    supply('BAT0', { type: 'Battery', status: 'Charging', scope: 'System' });
    expect(read()).toEqual({ known: true, value: 'ac' });
    supply('AC', { type: 'Mains', online: '0' });
    supply('BAT0', { type: 'Battery', status: 'Discharging' });
    expect(read()).toEqual({ known: true, value: 'battery' });
  });

  it('a desktop without a battery is on AC; a mouse battery does not count', () => {
    mkdirSync(join(root, 'sys/class/power_supply'), { recursive: true });
    expect(read()).toEqual({ known: true, value: 'ac' });
    supply('hidpp_battery_0', { type: 'Battery', status: 'Discharging', scope: 'Device' });
    expect(read()).toEqual({ known: true, value: 'ac' });
  });

  it('says unknown, and why, when it cannot tell', () => {
    expect(read()).toMatchObject({ known: false, why: expect.stringMatching(/cannot list .*power_supply: ENOENT/) });
    supply('BAT0', { type: 'Battery', status: 'Unknown' });
    expect(read()).toMatchObject({ known: false, why: expect.stringMatching(/neither charging nor discharging/) });
    expect(readPower({ root, platform: 'win32' })).toEqual({ known: false, why: 'the power source is not read on win32 yet (only Linux is supported)' });
  });
});
