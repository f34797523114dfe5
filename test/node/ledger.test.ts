// The transfer ledger and contribution record: periods that start where the
// owner says, persistence across restarts and a kill -9, a hard cap with
// concurrent fetches.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger, type PeriodConfig } from '../../src/node/ledger.js';
import { createRng, randomInt } from '../../src/rng.js';

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'volcrawl-ledger-'));
  path = join(dir, 'ledger.json');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const periods = (o: Partial<PeriodConfig> = {}): PeriodConfig => ({ timeZone: 'UTC', dayStartsAt: 0, monthStartsOn: 1, dailyCapBytes: null, monthlyCapBytes: null, ...o });
const at = (iso: string) => Date.parse(iso);

describe('periods', () => {
  it('counts a day from day_starts_at and a month from month_starts_on, and resets there', () => {
    const l = new Ledger({ path, autoFlushMs: 0, periods: periods({ dayStartsAt: 4 * 60, monthStartsOn: 15, dailyCapBytes: 1000, monthlyCapBytes: 5000 }) });
    l.addTransfer(300, 0, at('2026-06-15T03:59:00Z')); // before 04:00: still the 14th's day, May's month period
    l.addTransfer(200, 100, at('2026-06-15T04:00:00Z')); // the 15th's day, June's month period
    l.addTransfer(400, 0, at('2026-06-16T01:00:00Z')); // still the 15th's day
    expect(l.dayKey(at('2026-06-15T03:59:00Z'))).toBe('2026-06-14');
    expect(l.monthKey('2026-06-14')).toBe('2026-05-15');
    expect(l.monthKey('2026-01-03')).toBe('2025-12-15');
    const u = l.usage(at('2026-06-16T02:00:00Z'));
    expect(u.day).toBe('2026-06-15');
    expect(u.month).toBe('2026-06-15');
    expect(u.today).toMatchObject({ down: 600, up: 100 });
    expect(u.thisMonth).toMatchObject({ down: 600, up: 100 });
    expect(l.remaining(at('2026-06-16T02:00:00Z'))).toEqual({ day: 300, month: 4300, bytes: 300 });
    // The next day's period starts at 04:00: the daily count resets, the monthly one does not.
    expect(l.remaining(at('2026-06-16T04:00:00Z'))).toEqual({ day: 1000, month: 4300, bytes: 1000 });
    // A new month period on the 15th of July.
    expect(l.remaining(at('2026-07-15T04:00:00Z')).month).toBe(5000);
  });

  it('uses local time: a day in Berlin starts at 22:00 or 23:00 UTC', () => {
    const l = new Ledger({ path, autoFlushMs: 0, periods: periods({ timeZone: 'Europe/Berlin' }) });
    expect(l.dayKey(at('2026-06-01T21:59:00Z'))).toBe('2026-06-01');
    expect(l.dayKey(at('2026-06-01T22:00:00Z'))).toBe('2026-06-02'); // CEST
    expect(l.dayKey(at('2026-12-01T22:59:00Z'))).toBe('2026-12-01');
    expect(l.dayKey(at('2026-12-01T23:00:00Z'))).toBe('2026-12-02'); // CET
  });
});

describe('the contribution record', () => {
  it('counts tasks, pages, bytes and online and crawling time per day, and survives a restart', () => {
    let t = at('2026-06-01T10:00:00Z');
    const l = new Ledger({ path, autoFlushMs: 0, periods: periods(), now: () => t });
    l.addTask(12);
    l.addTask(3);
    l.addTransfer(5000, 700);
    l.tick(true);
    t += 5000;
    l.tick(true);
    t += 5000;
    l.tick(false); // paused: online, not crawling
    t += 3_600_000; // the computer slept: not online time
    l.tick(true);
    l.close();
    const again = new Ledger({ path, autoFlushMs: 0, periods: periods(), now: () => t });
    expect(again.warning).toBeNull();
    expect(again.usage().today).toEqual({ down: 5000, up: 700, tasks: 2, pages: 15, onlineMs: 10_000, activeMs: 5000 });
    const h = again.history(3);
    expect(h.map((d) => d.day)).toEqual(['2026-06-01', '2026-05-31', '2026-05-30']);
    expect(h[1]).toMatchObject({ tasks: 0, down: 0 });
  });

  it('keeps a bounded history', () => {
    let t = at('2026-01-01T12:00:00Z');
    const l = new Ledger({ path, autoFlushMs: 0, periods: periods(), keepDays: 10, now: () => t });
    for (let d = 0; d < 30; d++, t += 86_400_000) l.addTask(1);
    l.close();
    const again = new Ledger({ path, autoFlushMs: 0, periods: periods(), now: () => t });
    expect(again.history(40).filter((d) => d.tasks > 0)).toHaveLength(10);
  });

  it('moves a corrupt file aside and says so, instead of crashing', () => {
    writeFileSync(path, '{"version":1,"days":{"2026-06-01":{"down":-5}}}');
    const l = new Ledger({ path, autoFlushMs: 0, periods: periods() });
    expect(l.warning).toMatch(/is not a valid ledger .* moved to .*ledger\.json\.corrupt-\d+, counting from zero/);
    expect(readdirSync(dir).some((f) => f.startsWith('ledger.json.corrupt-'))).toBe(true);
    expect(l.remaining().bytes).toBe(Infinity);
  });

  it('is never torn by a kill -9 in the middle of writing', async () => {
    const child = spawn(process.execPath, [resolve('bin/run-ts.js'), 'test/node/ledger-child.ts', path], { stdio: ['ignore', 'pipe', 'inherit'] });
    let flushed = 0;
    await new Promise<void>((done, fail) => {
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (s: string) => {
        const lines = s.trim().split('\n');
        flushed = Number(lines.at(-1));
        if (flushed >= 200 && !child.killed) {
          child.kill('SIGKILL');
          done();
        }
      });
      child.on('exit', (code) => (child.killed ? done() : fail(new Error(`child exited ${code}`))));
    });
    await new Promise((r) => child.once('exit', r).exitCode !== null && r(null));
    expect(existsSync(path)).toBe(true);
    const l = new Ledger({ path, autoFlushMs: 0, periods: periods(), now: () => at('2026-06-01T13:00:00Z') });
    expect(l.warning).toBeNull();
    const today = l.usage().today;
    expect(today.down).toBeGreaterThanOrEqual(flushed * 1000);
    expect(today.up * 100).toBe(today.down); // one write, both counters: never half of one
  });
});

describe('the hard cap', () => {
  it('with many fetches at once, ends less than one reservation over the cap', () => {
    const PAGE = 2 * 1024 * 1024 + 64 * 1024; // a page's size limit plus headers
    const CAP = 50e6;
    const rng = createRng(20);
    for (let run = 0; run < 20; run++) {
      const l = new Ledger({ path: join(dir, `l${run}.json`), autoFlushMs: 0, periods: periods({ dailyCapBytes: CAP }), now: () => at('2026-06-01T12:00:00Z') });
      const open: { settle(d: number, u?: number): void }[] = [];
      // Eight threads: each step either starts a fetch or finishes a random one with a random size,
      // until a fetch is refused with none in flight (a refusal while others are in flight may be
      // followed by room again when they settle small).
      for (;;) {
        if (open.length < 8 && randomInt(rng, 2) === 0) {
          const r = l.reserve(PAGE);
          if (r) open.push(r);
          else if (open.length === 0) break;
        } else if (open.length > 0) {
          const i = randomInt(rng, open.length);
          open.splice(i, 1)[0]!.settle(randomInt(rng, PAGE - 1000) + 1, 1000);
        }
      }
      expect(l.reservedBytes).toBe(0);
      const used = CAP - (l.remaining().day as number);
      expect(used).toBeGreaterThanOrEqual(CAP);
      expect(used - CAP).toBeLessThan(PAGE);
      expect(l.reserve(PAGE)).toBeNull();
    }
  });

  it('grants nothing without room, settles once, and reports no cap as Infinity', () => {
    const l = new Ledger({ path, autoFlushMs: 0, periods: periods({ monthlyCapBytes: 100 }) });
    const r = l.reserve(80)!;
    expect(l.reserve(80)).not.toBeNull(); // 100 - 0 used - 80 reserved > 0
    expect(l.reserve(1)).toBeNull(); // 100 - 160 reserved
    r.settle(50);
    r.settle(50);
    expect(l.remaining().month).toBe(50);
    expect(new Ledger({ path: join(dir, 'x.json'), autoFlushMs: 0, periods: periods() }).remaining()).toEqual({ day: null, month: null, bytes: Infinity });
  });
});
