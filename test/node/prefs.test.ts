// The owner's preference file: defaults, validation that names the key,
// flags over the file, `prefs set`, and reloading without a restart.
import { once } from 'node:events';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  applyOverrides,
  defaultPrefs,
  loadPrefsFile,
  normaliseHostName,
  normaliseRange,
  parseByteSize,
  parsePrefsText,
  parseWindow,
  PrefsError,
  renderPrefsFile,
  setPrefInFile,
  setPrefValue,
} from '../../src/node/prefs.js';
import { PrefsWatcher } from '../../src/node/prefs-watch.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'volcrawl-prefs-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The error message of parsing `text`, or null when it is valid. */
function errorOf(text: string): string | null {
  try {
    parsePrefsText(text);
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(PrefsError);
    return (e as Error).message;
  }
}

describe('the preference file', () => {
  it('is created with the defaults and a comment on every key, and reads back as the defaults', () => {
    const path = join(dir, 'volunteer.toml');
    const first = loadPrefsFile(path);
    expect(first.created).toBe(true);
    expect(first.prefs).toEqual(defaultPrefs());
    const text = readFileSync(path, 'utf8');
    expect(text).toMatch(/^# volcrawl volunteer preferences/);
    for (const key of ['threads', 'max_bandwidth', 'every_day', 'daily_cap', 'monthly_cap', 'month_starts_on', 'day_starts_at', 'on_battery', 'cpu_busy_above', 'cpu_resume_below', 'min_pause_minutes', 'domains', 'domain_suffixes', 'address_ranges']) {
      expect(text).toMatch(new RegExp(`#.*\\n${key} = `));
    }
    expect(loadPrefsFile(path).created).toBe(false);
    const d = first.prefs;
    expect(d.threads).toBe(5);
    expect(d.pauseWhen).toEqual({ onBattery: true, cpuBusyAbove: 70, cpuResumeBelow: 40, cpuWindowMs: 60_000, minPauseMs: 300_000 });
    expect(d.schedule?.every((day) => day.length === 1 && day[0]!.start === 0 && day[0]!.end === 1440)).toBe(true);
  });

  it('reads every key of the issue', () => {
    const { prefs } = parsePrefsText(`
threads = 2
queue = 0
max_bandwidth = "500k"
time_zone = "Europe/Berlin"
[schedule]
every_day = []
monday = ["18:00-23:30"]
friday = ["22:00-06:00", "12:00-13:00"]
[transfer]
daily_cap = "2G"
monthly_cap = "50GiB"
month_starts_on = 15
day_starts_at = "04:30"
[pause_when]
on_battery = false
cpu_busy_above = 60
cpu_resume_below = 20
cpu_window_seconds = 30
min_pause_minutes = 10
[never_fetch]
domains = ["Intranet.Example.COM."]
domain_suffixes = ["*.bank.example", "bücher.example"]
address_ranges = ["203.0.113.0/24", "2001:DB8::/32", "198.51.100.7"]
`);
    expect(prefs.threads).toBe(2);
    expect(prefs.queue).toBe(0);
    expect(prefs.maxBandwidth).toBe(500_000);
    expect(prefs.timeZone).toBe('Europe/Berlin');
    expect(prefs.schedule?.[0]).toEqual([{ start: 18 * 60, end: 23 * 60 + 30 }]);
    expect(prefs.schedule?.[1]).toEqual([]);
    expect(prefs.schedule?.[4]).toEqual([
      { start: 22 * 60, end: 6 * 60 },
      { start: 12 * 60, end: 13 * 60 },
    ]);
    expect(prefs.transfer).toEqual({ dailyCapBytes: 2e9, monthlyCapBytes: 50 * 2 ** 30, monthStartsOn: 15, dayStartsAt: 4 * 60 + 30 });
    expect(prefs.pauseWhen).toEqual({ onBattery: false, cpuBusyAbove: 60, cpuResumeBelow: 20, cpuWindowMs: 30_000, minPauseMs: 600_000 });
    expect(prefs.neverFetch).toEqual({
      domains: ['intranet.example.com'],
      domainSuffixes: ['bank.example', 'xn--bcher-kva.example'],
      addressRanges: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7/32'],
    });
  });

  it('names the key of an unknown key or a bad value', () => {
    expect(errorOf('thread = 4')).toBe('thread: unknown key (did you mean threads?)');
    expect(errorOf('[pause_when]\ncpu_busy_abve = 50')).toBe('pause_when.cpu_busy_abve: unknown key (did you mean pause_when.cpu_busy_above?)');
    expect(errorOf('[pauses]\nx = 1')).toMatch(/^pauses: unknown key/);
    expect(errorOf('threads = 0')).toBe('threads: must be a whole number from 1 to 256');
    expect(errorOf('threads = "four"')).toBe('threads: must be a whole number from 1 to 256');
    expect(errorOf('max_bandwidth = "lots"')).toMatch(/^max_bandwidth: "lots" is not a size/);
    expect(errorOf('[transfer]\nmonthly_cap = 0')).toMatch(/^transfer\.monthly_cap: must be a positive/);
    expect(errorOf('[transfer]\nmonth_starts_on = 31')).toBe('transfer.month_starts_on: must be a whole number from 1 to 28');
    expect(errorOf('[schedule]\nmonday = ["25:00-26:00"]')).toMatch(/^schedule\.monday \(entry 1\): "25:00" is not a time/);
    expect(errorOf('[schedule]\ntuesday = "18:00-20:00"')).toMatch(/^schedule\.tuesday: must be a list of windows/);
    expect(errorOf('[never_fetch]\ndomains = ["ok.example", "10.0.0.1"]')).toMatch(/^never_fetch\.domains \(entry 2\): "10\.0\.0\.1" is not a host name \(put addresses in address_ranges\)/);
    expect(errorOf('[never_fetch]\naddress_ranges = ["10.0.0.0/33"]')).toMatch(/^never_fetch\.address_ranges \(entry 1\): .*prefix length must be 0\.\.32/);
    expect(errorOf('[pause_when]\ncpu_busy_above = 30\ncpu_resume_below = 50')).toMatch(/^pause_when\.cpu_resume_below: 50 is above cpu_busy_above/);
    expect(errorOf('time_zone = "Mars/Olympus"')).toMatch(/^time_zone: is not a time zone/);
    expect(errorOf('threads = 4\nqueue = [1,\n')).toMatch(/^not valid TOML at line \d+, column \d+/);
    expect(errorOf('[pause_when]\non_battery = "yes"')).toBe('pause_when.on_battery: must be true or false');
  });

  it('parses sizes, windows, host names and ranges', () => {
    expect(parseByteSize('500k')).toBe(500_000);
    expect(parseByteSize('2M')).toBe(2e6);
    expect(parseByteSize('1.5 GB')).toBe(1.5e9);
    expect(parseByteSize('50GiB')).toBe(50 * 2 ** 30);
    expect(parseByteSize('none')).toBeNull();
    expect(parseByteSize(4096)).toBe(4096);
    expect(() => parseByteSize('2X')).toThrow(/not a size/);
    expect(() => parseByteSize('iB')).toThrow(/not a size/);
    expect(parseWindow('22:00-06:00')).toEqual({ start: 1320, end: 360 });
    expect(parseWindow('00:00-24:00')).toEqual({ start: 0, end: 1440 });
    expect(parseWindow('18:00-24:00')).toEqual({ start: 1080, end: 0 });
    expect(() => parseWindow('10:00-10:00')).toThrow(/empty/);
    expect(() => parseWindow('24:00-01:00')).toThrow(/not a time/);
    expect(normaliseHostName('WWW.Example.org.')).toBe('www.example.org');
    expect(() => normaliseHostName('exa mple.org')).toThrow(/not a host name/);
    expect(normaliseRange('::1')).toBe('::1/128');
    expect(() => normaliseRange('example.org/8')).toThrow(/not an IP address/);
  });

  it('lets flags override the file', () => {
    const { prefs } = parsePrefsText('threads = 2\nmax_bandwidth = "1M"\n[transfer]\ndaily_cap = "1G"\nmonthly_cap = "10G"');
    const p = applyOverrides(prefs, { threads: 8, transfer: { dailyCapBytes: null } });
    expect(p.threads).toBe(8);
    expect(p.maxBandwidth).toBe(1e6);
    expect(p.transfer.dailyCapBytes).toBeNull();
    expect(p.transfer.monthlyCapBytes).toBe(10e9);
  });

  it('sets one key, validates the whole, and rewrites the file in the standard layout', () => {
    const path = join(dir, 'volunteer.toml');
    loadPrefsFile(path);
    expect(setPrefInFile(path, 'transfer.daily_cap', '2G').transfer.dailyCapBytes).toBe(2e9);
    expect(setPrefInFile(path, 'schedule.monday', '["18:00-23:00"]').schedule?.[0]).toEqual([{ start: 1080, end: 1380 }]);
    expect(setPrefInFile(path, 'threads', '3').threads).toBe(3);
    const again = loadPrefsFile(path);
    expect(again.prefs.transfer.dailyCapBytes).toBe(2e9);
    expect(again.prefs.threads).toBe(3);
    expect(again.text).toContain('# Per day.\ndaily_cap = "2G"');
    const before = readFileSync(path, 'utf8');
    expect(() => setPrefInFile(path, 'threads', '0')).toThrow('threads: must be a whole number from 1 to 256');
    expect(() => setPrefInFile(path, 'transfer.dayly_cap', '1G')).toThrow('transfer.dayly_cap: unknown key (did you mean transfer.daily_cap?)');
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(setPrefValue({}, 'never_fetch.domains', '["a.example"]').prefs.neverFetch.domains).toEqual(['a.example']);
    expect(parsePrefsText(renderPrefsFile(again.raw)).prefs).toEqual(again.prefs);
  });
});

describe('reloading without a restart', () => {
  async function run(fsWatch: boolean): Promise<void> {
    const path = join(dir, 'volunteer.toml');
    writeFileSync(path, 'threads = 2\n');
    const w = new PrefsWatcher({ path, overrides: { queue: 9 }, pollMs: fsWatch ? 60_000 : 50, fsWatch }).start();
    try {
      expect(w.current.threads).toBe(2);
      expect(w.current.queue).toBe(9);
      // An editor's save: a new file renamed over the old one.
      let changed = once(w, 'change');
      writeFileSync(`${path}.new`, 'threads = 4\nqueue = 1\n');
      renameSync(`${path}.new`, path);
      const [p] = await changed;
      expect(p.threads).toBe(4);
      expect(p.queue).toBe(9); // the flag still wins
      // A bad edit keeps the last good preferences and says why.
      const invalid = once(w, 'invalid');
      writeFileSync(path, 'threads = 4\n[transfer]\ndaily_cap = "a lot"\n');
      const [e] = await invalid;
      expect(e.message).toMatch(/volunteer\.toml: transfer\.daily_cap: "a lot" is not a size.*keeping the preferences in force/);
      expect(w.current.threads).toBe(4);
      expect(w.lastError).not.toBeNull();
      changed = once(w, 'change');
      writeFileSync(path, 'threads = 6\n');
      expect((await changed)[0].threads).toBe(6);
      expect(w.lastError).toBeNull();
    } finally {
      w.close();
    }
  }
  it('picks up a save through fs.watch', async () => {
    await run(true);
  });
  it('picks up a save through the stat poll alone', async () => {
    await run(false);
  });
  it('refuses to start on a bad file (no last good preferences to keep)', () => {
    const path = join(dir, 'volunteer.toml');
    writeFileSync(path, 'threads = -1\n');
    expect(() => new PrefsWatcher({ path })).toThrow(/volunteer\.toml: threads: must be a whole number/);
  });
});
