// The run-state policy with a fake clock: hysteresis, minimum pause, windows
// across midnight and DST, caps, the owner's pause, unknown probes.
import { describe, expect, it } from 'vitest';
import type { Reading, PowerSource } from '../../src/node/os-probe.js';
import { prefsFromRaw, type Prefs } from '../../src/node/prefs.js';
import { decideRunState, initialMemory, ownerPause, ownerResume, scheduleAllows, type PolicyInputs, type PolicyMemory, type RunDecision } from '../../src/node/run-policy.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2026, 5, 1, 12, 0); // Monday 1 June 2026, 12:00 UTC

const cpu = (v: number): Reading<number> => ({ known: true, value: v });
const ac: Reading<PowerSource> = { known: true, value: 'ac' };
const battery: Reading<PowerSource> = { known: true, value: 'battery' };
const noCap = { day: null, month: null };

function inputs(prefs: Prefs, now: number, over: Partial<PolicyInputs> = {}): PolicyInputs {
  return { now, prefs, cpuOtherPercent: cpu(0), power: ac, remaining: noCap, ...over };
}

/** Runs the policy over a sequence of inputs; returns the decisions and the number of state changes. */
function run(prefs: Prefs, steps: Partial<PolicyInputs>[], start: PolicyMemory = initialMemory(T0)): { decisions: RunDecision[]; flips: number } {
  let mem = start;
  let flips = 0;
  const decisions: RunDecision[] = [];
  steps.forEach((s, i) => {
    const d = decideRunState(mem, inputs(prefs, s.now ?? T0 + i * 5000, s));
    if (d.changed) flips++;
    mem = d.memory;
    decisions.push(d);
  });
  return { decisions, flips };
}

describe('pausing while other programs use the CPU', () => {
  const prefs = prefsFromRaw({ pause_when: { cpu_busy_above: 70, cpu_resume_below: 40, min_pause_minutes: 5 } });

  it('does not flap around the pause threshold, nor around the resume threshold', () => {
    // 20 minutes of samples every 5 s hovering around 70%, then around 40%.
    const steps: Partial<PolicyInputs>[] = [];
    for (let i = 0; i < 240; i++) steps.push({ cpuOtherPercent: cpu(i % 2 ? 71 : 69) });
    for (let i = 0; i < 240; i++) steps.push({ cpuOtherPercent: cpu(i % 2 ? 41 : 39) });
    const { decisions, flips } = run(prefs, steps);
    expect(decisions[0]!.state).toBe('running');
    expect(decisions[1]!.state).toBe('paused');
    expect(decisions[1]!.reasons).toEqual(['busy']);
    expect(decisions.slice(1, 240).every((d) => d.state === 'paused')).toBe(true); // 69% is not below 40%
    expect(decisions.at(-1)!.state).toBe('running');
    expect(flips).toBe(2); // one pause, one resume — over 40 minutes of noise on both thresholds
  });

  it('keeps a pause for the minimum time even when the load goes at once', () => {
    const t = (m: number) => T0 + m * MIN;
    const { decisions } = run(prefs, [
      { now: t(0), cpuOtherPercent: cpu(95) },
      { now: t(1), cpuOtherPercent: cpu(5) },
      { now: t(4.99), cpuOtherPercent: cpu(5) },
      { now: t(5), cpuOtherPercent: cpu(5) },
    ]);
    expect(decisions.map((d) => d.state)).toEqual(['paused', 'paused', 'paused', 'running']);
    expect(decisions[1]!.details[0]).toMatch(/resumes below 40% and after 4 min more/);
  });

  it('does not pause when the CPU use is unknown, and says why', () => {
    const d = decideRunState(initialMemory(T0), inputs(prefs, T0, { cpuOtherPercent: { known: false, why: 'CPU use is not read on darwin yet' } }));
    expect(d.state).toBe('running');
    expect(d.notes).toEqual(['CPU use unknown (CPU use is not read on darwin yet): not pausing for it']);
  });

  it('never pauses for the CPU when turned off (0)', () => {
    const off = prefsFromRaw({ pause_when: { cpu_busy_above: 0 } });
    expect(decideRunState(initialMemory(T0), inputs(off, T0, { cpuOtherPercent: cpu(100) })).state).toBe('running');
  });
});

describe('pausing on battery', () => {
  const prefs = prefsFromRaw({ pause_when: { on_battery: true, min_pause_minutes: 3 } });
  it('pauses on battery and resumes on AC after the minimum pause', () => {
    const t = (m: number) => T0 + m * MIN;
    const { decisions, flips } = run(prefs, [
      { now: t(0), power: battery },
      { now: t(1), power: ac },
      { now: t(2), power: battery },
      { now: t(3), power: ac },
      { now: t(4), power: ac },
    ]);
    expect(decisions.map((d) => d.state)).toEqual(['paused', 'paused', 'paused', 'running', 'running']);
    expect(decisions[0]!.details).toEqual(['battery: running on battery']);
    expect(flips).toBe(2);
  });
  it('does not pause when told not to, nor when the power source is unknown', () => {
    const off = prefsFromRaw({ pause_when: { on_battery: false } });
    expect(decideRunState(initialMemory(T0), inputs(off, T0, { power: battery })).state).toBe('running');
    const d = decideRunState(initialMemory(T0), inputs(prefs, T0, { power: { known: false, why: 'cannot list /sys/class/power_supply: ENOENT' } }));
    expect(d.state).toBe('running');
    expect(d.notes[0]).toMatch(/^power source unknown \(cannot list/);
  });
});

describe('crawl windows', () => {
  it('follows a window across midnight on the day it starts', () => {
    const prefs = prefsFromRaw({ time_zone: 'UTC', schedule: { every_day: [], monday: ['22:00-06:00'] } });
    const at = (iso: string) => scheduleAllows(prefs.schedule, Date.parse(iso), prefs.timeZone).allowed;
    expect(at('2026-06-01T21:59:59Z')).toBe(false); // Monday
    expect(at('2026-06-01T22:00:00Z')).toBe(true);
    expect(at('2026-06-01T23:59:59Z')).toBe(true);
    expect(at('2026-06-02T00:00:00Z')).toBe(true); // Tuesday, the spill-over of Monday night
    expect(at('2026-06-02T05:59:59Z')).toBe(true);
    expect(at('2026-06-02T06:00:00Z')).toBe(false);
    expect(at('2026-06-02T23:00:00Z')).toBe(false); // Tuesday has no window of its own
    expect(at('2026-06-01T03:00:00Z')).toBe(false); // Sunday night is not Monday night
    const d = decideRunState(initialMemory(T0), inputs(prefs, Date.parse('2026-06-02T07:00:00Z')));
    expect(d.details).toEqual(['schedule: outside the crawl windows (next: monday 22:00)']);
  });

  it('uses local time: windows shift with DST, and a night that loses or gains an hour runs for what the clock says', () => {
    const prefs = prefsFromRaw({ time_zone: 'Europe/Berlin', schedule: { every_day: ['01:30-04:00'] } });
    const allowed = (utcMs: number) => scheduleAllows(prefs.schedule, utcMs, prefs.timeZone).allowed;
    /** Minutes allowed between two UTC instants, sampled each minute. */
    const minutesAllowed = (fromIso: string, toIso: string) => {
      let n = 0;
      for (let t = Date.parse(fromIso); t < Date.parse(toIso); t += MIN) if (allowed(t)) n++;
      return n;
    };
    // Summer (CEST, UTC+2): 01:30 local is 23:30 UTC.
    expect(allowed(Date.parse('2026-06-01T23:29:00Z'))).toBe(false);
    expect(allowed(Date.parse('2026-06-01T23:30:00Z'))).toBe(true);
    // Spring forward, 29 March 2026: 02:00 CET jumps to 03:00 CEST, so the night's window is 90 minutes long.
    expect(minutesAllowed('2026-03-28T22:00:00Z', '2026-03-29T06:00:00Z')).toBe(90);
    expect(allowed(Date.parse('2026-03-29T00:59:00Z'))).toBe(true); // 01:59 CET
    expect(allowed(Date.parse('2026-03-29T01:00:00Z'))).toBe(true); // 03:00 CEST
    expect(allowed(Date.parse('2026-03-29T02:00:00Z'))).toBe(false); // 04:00 CEST
    // Fall back, 25 October 2026: 03:00 CEST goes back to 02:00 CET, so the window is 210 minutes long.
    expect(minutesAllowed('2026-10-24T20:00:00Z', '2026-10-25T06:00:00Z')).toBe(210);
    // Winter (CET, UTC+1): 04:00 local is 03:00 UTC.
    expect(allowed(Date.parse('2026-12-01T02:59:00Z'))).toBe(true);
    expect(allowed(Date.parse('2026-12-01T03:00:00Z'))).toBe(false);
  });

  it('runs any time without a [schedule], and never on a day with []', () => {
    expect(scheduleAllows(null, T0, null).allowed).toBe(true);
    const never = prefsFromRaw({ schedule: { every_day: [] } });
    const r = scheduleAllows(never.schedule, T0, 'UTC');
    expect(r).toEqual({ allowed: false, next: null });
  });
});

describe('transfer caps and the owner', () => {
  const prefs = prefsFromRaw({ transfer: { daily_cap: '1G', monthly_cap: '10G', day_starts_at: '04:00' } });

  it('pauses at a cap and resumes when the ledger starts a new period', () => {
    const { decisions } = run(prefs, [{ remaining: { day: 5, month: 100 } }, { remaining: { day: 0, month: 100 } }, { remaining: { day: 1e9, month: 100 } }, { remaining: { day: 1e9, month: -3 } }]);
    expect(decisions.map((d) => d.state)).toEqual(['running', 'paused', 'running', 'paused']);
    expect(decisions[1]!.details).toEqual(['cap: daily transfer cap reached (1.00 GB); resumes when the next day starts at 04:00']);
    expect(decisions[3]!.details[0]).toMatch(/^cap: monthly transfer cap reached \(10\.00 GB\); resumes when the month starts on day 1$/);
  });

  it('pauses for the owner for 2 h, or until resumed; resuming leaves other reasons in force', () => {
    let mem = ownerPause(initialMemory(T0), T0, 2 * HOUR);
    let d = decideRunState(mem, inputs(prefs, T0 + 1000));
    expect(d.state).toBe('paused');
    expect(d.details).toEqual(['owner: paused by the owner for 2 h 0 min more']);
    mem = d.memory;
    d = decideRunState(mem, inputs(prefs, T0 + 2 * HOUR - 1));
    expect(d.state).toBe('paused');
    d = decideRunState(d.memory, inputs(prefs, T0 + 2 * HOUR));
    expect(d.state).toBe('running');
    expect(d.changed).toBe(true);
    expect(d.memory.owner).toBeNull();
    // Until resumed, with a cap reached at the same time: resume ends only the owner's pause.
    mem = ownerPause(d.memory, T0 + 3 * HOUR);
    d = decideRunState(mem, inputs(prefs, T0 + 100 * HOUR, { remaining: { day: 0, month: 5 } }));
    expect(d.reasons).toEqual(['owner', 'cap']);
    d = decideRunState(ownerResume(d.memory), inputs(prefs, T0 + 100 * HOUR + 1, { remaining: { day: 0, month: 5 } }));
    expect(d.reasons).toEqual(['cap']);
    expect(() => ownerPause(d.memory, T0, 0)).toThrow(RangeError);
  });

  it('reports every reason that holds, the headline first, and keeps `since` while the state holds', () => {
    const all = prefsFromRaw({ time_zone: 'UTC', schedule: { every_day: [] }, transfer: { daily_cap: '1G' } });
    const first = decideRunState(ownerPause(initialMemory(T0), T0), inputs(all, T0 + 1, { power: battery, cpuOtherPercent: cpu(99), remaining: { day: 0, month: null } }));
    expect(first.reasons).toEqual(['owner', 'cap', 'schedule', 'battery', 'busy']);
    expect(first.memory.since).toBe(T0 + 1);
    const second = decideRunState(first.memory, inputs(all, T0 + 5000, { power: battery, cpuOtherPercent: cpu(99), remaining: { day: 0, month: null } }));
    expect(second.changed).toBe(false);
    expect(second.memory.since).toBe(T0 + 1);
    expect(JSON.parse(JSON.stringify(second.memory))).toEqual(second.memory); // plain JSON, so it can be persisted
  });
});
