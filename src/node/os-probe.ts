// What the operating system says about the owner's use of the computer: the
// CPU time other programs use, and whether it runs on battery. Linux reads
// /proc and /sys/class/power_supply; every probe takes the root of those trees
// (tests build a fake one) and the platform. Where a value cannot be read the
// probe says "unknown" and why — it never guesses.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A probe's answer: a value, or unknown with the reason. */
export type Reading<T> = { known: true; value: T } | { known: false; why: string };

const unknown = <T>(why: string): Reading<T> => ({ known: false, why });
const known = <T>(value: T): Reading<T> => ({ known: true, value });

export interface ProbeOptions {
  /** Root of the /proc and /sys trees (default "/"). */
  root?: string;
  /** Default: process.platform. */
  platform?: NodeJS.Platform;
}

function unsupported(platform: NodeJS.Platform, what: string): string {
  return `${what} is not read on ${platform} yet (only Linux is supported)`;
}

// ---------------------------------------------------------------------------
// CPU

/** Cumulative CPU times in clock ticks since boot: the whole machine's, and this process's. */
export interface CpuTimes {
  /** All CPU time of all cores (busy + idle + iowait). */
  total: number;
  /** Busy time of all cores (user, nice, system, irq, softirq, steal). */
  busy: number;
  /** This process's user + system time (all its threads). */
  self: number;
}

/** Reads /proc/stat and /proc/self/stat. */
export function readCpuTimes(opts: ProbeOptions = {}): Reading<CpuTimes> {
  const platform = opts.platform ?? process.platform;
  if (platform !== 'linux') return unknown(unsupported(platform, 'CPU use'));
  const root = opts.root ?? '/';
  let stat: string;
  let self: string;
  try {
    stat = readFileSync(join(root, 'proc/stat'), 'utf8');
    self = readFileSync(join(root, 'proc/self/stat'), 'utf8');
  } catch (e) {
    return unknown(`cannot read ${(e as NodeJS.ErrnoException).path ?? '/proc'}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  // "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (guest time is already inside user/nice).
  const line = stat.split('\n').find((l) => l.startsWith('cpu '));
  const f = line?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  if (f.length < 4 || f.some((x) => !Number.isFinite(x) || x < 0)) return unknown('/proc/stat has no readable "cpu" line');
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
  const busy = user + nice + system + irq + softirq + steal;
  // The command name (field 2) is in parentheses and may hold spaces or ')': fields count from the last ')'.
  const after = self.slice(self.lastIndexOf(')') + 1).trim().split(/\s+/);
  const utime = Number(after[11]);
  const stime = Number(after[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return unknown('/proc/self/stat has no readable utime/stime');
  return known({ total: busy + idle + iowait, busy, self: utime + stime });
}

export interface CpuMonitorOptions extends ProbeOptions {
  /** Window the use is averaged over, ms. */
  windowMs: number;
  /** Clock, ms (default performance.now). */
  now?: () => number;
  /** Source of readings (default readCpuTimes with root/platform). */
  read?: () => Reading<CpuTimes>;
}

/**
 * CPU use by programs other than this one, averaged over a trailing window:
 * 100 × (Δbusy − Δself) / Δtotal, as a share of all cores (50% on a 4-core
 * machine = two cores' worth). Call sample() periodically; a window not yet
 * half covered by samples reads as unknown ("warming up").
 */
export class CpuMonitor {
  private readonly samples: { t: number; c: CpuTimes }[] = [];
  private lastError: string | null = null;
  private readonly now: () => number;
  private readonly read: () => Reading<CpuTimes>;

  constructor(private readonly opts: CpuMonitorOptions) {
    if (!(opts.windowMs > 0)) throw new RangeError('windowMs must be > 0');
    this.now = opts.now ?? (() => performance.now());
    this.read = opts.read ?? (() => readCpuTimes(opts));
  }

  get windowMs(): number {
    return this.opts.windowMs;
  }

  set windowMs(ms: number) {
    if (!(ms > 0)) throw new RangeError('windowMs must be > 0');
    this.opts.windowMs = ms;
  }

  sample(): void {
    const r = this.read();
    if (!r.known) {
      this.lastError = r.why;
      this.samples.length = 0;
      return;
    }
    this.lastError = null;
    const t = this.now();
    this.samples.push({ t, c: r.value });
    // Keep one sample at or before the window's start, so the window is fully covered.
    while (this.samples.length > 2 && (this.samples[1] as { t: number }).t <= t - this.opts.windowMs) this.samples.shift();
  }

  /** Other programs' CPU use in percent over the window. */
  otherPercent(): Reading<number> {
    if (this.lastError !== null) return unknown(this.lastError);
    const last = this.samples.at(-1);
    const first = this.samples[0];
    if (!last || !first || last === first) return unknown('warming up: no CPU sample to compare with yet');
    const span = last.t - first.t;
    if (span < this.opts.windowMs / 2) return unknown(`warming up: ${Math.round(span / 1000)} s of the ${Math.round(this.opts.windowMs / 1000)} s window sampled`);
    const dTotal = last.c.total - first.c.total;
    if (dTotal <= 0) return unknown('the CPU counters did not move');
    const other = last.c.busy - first.c.busy - (last.c.self - first.c.self);
    return known(Math.min(100, Math.max(0, (100 * other) / dTotal)));
  }
}

// ---------------------------------------------------------------------------
// Power

export type PowerSource = 'ac' | 'battery';

/**
 * On AC when a mains/USB supply is online or a battery is charging; on
 * battery when none is and a system battery is discharging; on AC when the
 * kernel lists no system battery at all (a desktop). Anything else is
 * unknown. Peripheral batteries (scope "Device": mice, headsets) are ignored.
 */
export function readPower(opts: ProbeOptions = {}): Reading<PowerSource> {
  const platform = opts.platform ?? process.platform;
  if (platform !== 'linux') return unknown(unsupported(platform, 'the power source'));
  const dir = join(opts.root ?? '/', 'sys/class/power_supply');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    return unknown(`cannot list ${dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const attr = (name: string, a: string): string | null => {
    try {
      return readFileSync(join(dir, name, a), 'utf8').trim();
    } catch {
      return null;
    }
  };
  let supplyOnline = false;
  let batteries = 0;
  let discharging = false;
  let charging = false;
  let unreadable: string | null = null;
  for (const name of names) {
    const type = attr(name, 'type');
    if (type === null) {
      unreadable ??= name;
      continue;
    }
    if (type === 'Battery') {
      if (attr(name, 'scope') === 'Device') continue;
      batteries++;
      const status = attr(name, 'status');
      if (status === 'Discharging') discharging = true;
      else if (status === 'Charging') charging = true;
    } else if (type === 'Mains' || type === 'USB' || type === 'Wireless' || type.startsWith('USB_')) {
      if (attr(name, 'online') === '1') supplyOnline = true;
    }
  }
  if (supplyOnline || charging) return known('ac');
  if (discharging) return known('battery');
  if (batteries === 0 && unreadable === null) return known('ac');
  return unknown(unreadable !== null ? `cannot read ${join(dir, unreadable, 'type')}` : 'a battery is listed but no supply is online and the battery is neither charging nor discharging');
}

/** The probes a running node samples, injectable as a whole. */
export interface OsProbes {
  cpu: CpuMonitor;
  power: () => Reading<PowerSource>;
}

export function linuxProbes(opts: ProbeOptions & { windowMs: number; now?: () => number }): OsProbes {
  return { cpu: new CpuMonitor(opts), power: () => readPower(opts) };
}
