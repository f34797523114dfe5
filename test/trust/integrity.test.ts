// End to end with real processes, as the integrity benchmark runs it:
// `dht-manager serve` and three honest plus one forging `volunteer-crawler
// join` (the real CLI with the test plugin testbed/misbehave.ts, which rewrites
// page text under the true digest) on the local test web. The forger is caught
// by independent second and third crawls, quarantined, and its versions
// replaced; no honest volunteer is quarantined; the operator's CLI lists,
// lifts and bans. Every wait is on a condition with a generous bound.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runIntegrity } from '../../testbed/integrity.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [resolve(ROOT, 'bin/dht-manager.js'), 'volunteers', ...args], { cwd: ROOT, timeout: 120_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('real processes: a forging volunteer among honest ones', () => {
  it('is quarantined, its forged versions stop being current, no honest volunteer is quarantined, and operators see and act on it', async () => {
    let cliChecked = false;
    const res = await runIntegrity({
      honest: 3,
      malicious: ['forge-text'],
      sites: 6,
      pagesPerSite: 6,
      timeScale: 600,
      // Half of every task checked: detection in a few tasks, so the test stays short;
      // no rate cap in effect (as the testbed ran until session 11), so the forger gets tasks fast.
      managerArgs: ['--spot-check-min-rate', '0.5', '--rate-cap', '1000'],
      // On loopback the coordinates are noise: a forger whose Vivaldi height came out
      // large is "far" from every host and got 4 tasks in 6 minutes in one CI run
      // (never caught). Honest volunteers with one thread and no queue are full while
      // they crawl, so due tasks overflow to the forger's spare capacity whatever the
      // coordinates say: its task count no longer rests on chance.
      honestCapacity: { threads: 1, queue: 0 },
      maliciousCapacity: { threads: 4, queue: 4 },
      maxRunMs: 300_000,
      ...(process.env.VOLCRAWL_INTEGRITY_LOGS !== undefined ? { logDir: process.env.VOLCRAWL_INTEGRITY_LOGS, onProgress: (s: string) => console.log(s) } : {}),
      settleMs: 120_000,
      seed: 3,
      beforeStop: async ({ api, malicious, honest }) => {
        const list = await cli(['list', '--api', api, '--json']);
        expect(list.code, list.stderr).toBe(0);
        const body = JSON.parse(list.stdout) as { volunteers: { id: string; status: string }[]; verificationOverhead: number };
        expect(body.volunteers.find((v) => v.id === malicious[0])?.status).toBe('quarantined');
        expect(body.volunteers.filter((v) => honest.includes(v.id)).every((v) => v.status !== 'quarantined' && v.status !== 'banned')).toBe(true);

        const metrics = await (await fetch(`${api}/metrics`)).text();
        expect(metrics).toMatch(/^volcrawl_volunteers\{status="quarantined"\} 1$/m);
        expect(metrics).toMatch(/^volcrawl_quarantines_total [1-9]/m);
        expect(metrics).toMatch(/^volcrawl_verification_overhead /m);

        const lifted = await cli(['lift', malicious[0]!, '--api', api, '--by', 'test', '--json']);
        expect(lifted.code, lifted.stderr).toBe(0);
        expect((JSON.parse(lifted.stdout) as { status: string }).status).toBe('suspect');
        const banned = await cli(['ban', malicious[0]!, '--api', api, '--reason', 'forged page text', '--json']);
        expect(banned.code, banned.stderr).toBe(0);
        expect((JSON.parse(banned.stdout) as { status: string; ban: { reason: string } }).ban.reason).toBe('forged page text');
        const unknown = await cli(['show', '12D3KooWNobodyNobodyNobodyNobodyNobodyNobodyNobody', '--api', api]);
        expect(unknown.code).toBe(3);
        expect(unknown.stderr).toMatch(/404: no volunteer/);
        const noBody = await cli(['ban', honest[0]!, '--api', api]);
        expect(noBody.code).not.toBe(0);
        expect(noBody.stderr).toMatch(/--reason/);
        cliChecked = true;
      },
    });
    expect(res.detected, JSON.stringify(res)).toBe(1);
    expect(res.falselyQuarantined, JSON.stringify(res)).toBe(0);
    expect(res.forgedCurrentAtEnd, JSON.stringify(res)).toBe(0);
    expect(cliChecked).toBe(true);
  }, 900_000);
});
