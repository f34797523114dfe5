// `npm run demo` as a real process: a short run with churn (test web in the
// demo, `dht-manager serve` and volunteer child processes), its JSON report's
// shape and that pages were crawled; a killed manager ends the demo with its
// log; usage errors exit 2. No timing assertions, generous bounds.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DemoReport } from '../../demo/report.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Runs the demo; `onStderr` sees its progress output as it grows. */
function run(args: string[], timeoutMs: number, onStderr?: (soFar: string) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const p = spawn(process.execPath, [join(ROOT, 'bin/run-ts.js'), 'demo/main.ts', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      onStderr?.(stderr);
    });
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      fail(new Error(`demo did not finish in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    p.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

describe('npm run demo', () => {
  it('--help and bad flags', async () => {
    // Five independent processes: started together, not one after the other.
    const bads = [['--volunteers', '0'], ['--speed', 'fast'], ['--bogus'], ['--duration']];
    const [help, ...rs] = await Promise.all([run(['--help'], 60_000), ...bads.map((bad) => run(bad, 60_000))]);
    expect(help!.code).toBe(0);
    expect(help!.stdout).toContain('--volunteers');
    bads.forEach((bad, i) => {
      expect(rs[i]!.code, bad.join(' ')).toBe(2);
      expect(rs[i]!.stderr).toMatch(/demo: /);
    });
  }, 120_000);

  it('a short run with churn crawls pages and reports per group against the ground truth', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volcrawl-demo-test-'));
    try {
      const r = await run(['--volunteers', '3', '--sites', '5', '--speed', '600', '--duration', '30', '--churn', '--seed', '3', '--json', '--data-dir', join(dir, 'd')], 240_000);
      expect(r.code, r.stderr).toBe(0);
      // The URL the demo prints is the one the manager process printed (its startup lines are in manager.log).
      const dashboard = /dashboard {2}(http:\/\/127\.0\.0\.1:\d+\/dashboard)/.exec(r.stderr)?.[1];
      expect(dashboard).toBeDefined();
      expect(readFileSync(join(dir, 'd', 'manager.log'), 'utf8')).toContain(`  dashboard ${dashboard}\n`);
      const report = JSON.parse(r.stdout.trim().split('\n').pop()!) as DemoReport;
      expect(report.config).toMatchObject({ volunteers: 3, speed: 600, sites: 5, churn: true, seed: 3 });
      expect(report.tasks.issued).toBeGreaterThan(0);
      expect(report.tasks.completed).toBeGreaterThan(0);
      expect(report.tasks.failed).toBeGreaterThanOrEqual(0);
      expect(report.pages.versionsStored).toBeGreaterThan(0);
      expect(report.groups.length).toBe(5);
      // The interval table starts with the initial intervals (simulated: the paper's 1 h … 16 h);
      // every channel starts in the middle group, where the estimator takes it from.
      expect(report.intervals[0]).toMatchObject({ atSimHours: 0, intervalsSimMinutes: [60, 120, 240, 480, 960] });
      expect(report.intervals.length).toBe(Math.min(report.pages.rounds, 50) + 1);
      expect(report.channels.map((c) => c.startGroup)).toEqual([2, 2, 2, 2, 2]);
      expect(report.channels.map((c) => c.trueChangeIntervalSimMinutes)).toEqual([30, 120, 360, 1440, 5760]);
      expect(report.groups.reduce((s, g) => s + g.channels, 0)).toBe(5);
      const measured = report.groups.filter((g) => g.final.stored > 0);
      expect(measured.length).toBeGreaterThan(0);
      for (const g of measured) {
        expect(g.freshness).toBeGreaterThanOrEqual(0);
        expect(g.freshness).toBeLessThanOrEqual(1);
        expect(g.coverage).toBeGreaterThan(0);
        expect(g.meanAgeSimMinutes).toBeGreaterThanOrEqual(0);
      }
      expect(report.churn).not.toBeNull();
      expect(report.churn!.completedPerQuarter.length).toBe(4);
      expect(report.churn!.graceful + report.churn!.silent).toBeGreaterThan(0);
      // --data-dir is kept; the manager shut down (its database lock is free, so the CLI can open it).
      expect(existsSync(join(dir, 'd', 'manager', 'db'))).toBe(true);
      expect(readdirSync(join(dir, 'd')).filter((f) => f.startsWith('volunteer-')).length).toBe(3);
      const list = await new Promise<number | null>((done) =>
        spawn(process.execPath, [join(ROOT, 'bin/dht-manager.js'), 'channels', 'list', '--data-dir', join(dir, 'd', 'manager')], { cwd: ROOT, stdio: 'ignore' }).on('exit', done),
      );
      expect(list).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('a manager process that dies ends the demo with the tail of manager.log and a non-zero exit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volcrawl-demo-test-'));
    try {
      let killed = false;
      const r = await run(['--volunteers', '1', '--sites', '2', '--speed', '600', '--duration', '120', '--json', '--data-dir', join(dir, 'd')], 240_000, (soFar) => {
        const pid = /dht-manager serve, pid (\d+)/.exec(soFar)?.[1];
        if (pid !== undefined && !killed) {
          killed = true;
          process.kill(Number(pid), 'SIGKILL');
        }
      });
      expect(killed).toBe(true);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/demo: the manager process exited unexpectedly \(signal SIGKILL\)/);
      expect(r.stderr).toContain(`last output of dht-manager serve (${join(dir, 'd', 'manager.log')})`);
      expect(r.stderr).toMatch(/dht-manager: peer 12D3KooW/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
