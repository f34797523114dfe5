// How often a live node measures RTTs for Vivaldi, driven by Vivaldi's own
// sample error. After a short warm-up at full speed, every sample either
// agrees with the coordinates (|predicted − measured| within a relative bound,
// or within an absolute floor: on a LAN or loopback, sub-millisecond RTTs make
// relative errors meaningless, and a few ms of scheduling noise on a busy PC
// would otherwise keep it probing at full speed; a crawler 5 ms off is as good
// as any for routing) and stretches the gap between probing rounds,
// or disagrees and shortens it — additive-increase/multiplicative-decrease in
// log space. A node whose coordinate fits what it measures backs off to tens of
// seconds (Serf and Consul settle at a slow fixed pace; this gets there without
// slowing the first minute); a fresh node, or one whose RTTs changed (a peer
// moved, or it did), keeps or regains full speed until the fit is back.
//
// The gap grows when more than ln(shrink) / (ln(growth) + ln(shrink)) of the
// samples agree (0.63 with the defaults), so a node backs off once its median
// sample error is well inside agreeError.
//
// A busy host (src/coords/loop-lag.ts: its event loop stalls) probes no
// faster than `busyIntervalMs`, one probe a round, whatever the samples say: a
// volunteer must cost its owner little, and samples taken on a stalled loop
// are noise anyway (the caller drops them before they reach `observe`).
//
// Pure: time and randomness (the jitter that keeps nodes from probing in step)
// come from the caller.
import type { Rng } from '../rng.js';
import { mergeOptions, optionChecker } from '../options.js';

export interface AdaptiveProbeOptions {
  /** Shortest gap between probing rounds (full speed), ms. */
  minIntervalMs: number;
  /** Longest gap, ms. */
  maxIntervalMs: number;
  /** After the warm-up, each agreeing sample multiplies the gap by this (> 1)… */
  growth: number;
  /** …and each disagreeing one divides it by this (≥ 1). */
  shrink: number;
  /** Samples taken at full speed first, whatever they say. */
  warmupSamples: number;
  /** A sample agrees with the coordinates when |predicted − measured| ≤
   * max(agreeToleranceMs, agreeError × measured). */
  agreeError: number;
  agreeToleranceMs: number;
  /** Probes per round at full speed; one per round otherwise. */
  fastFanout: number;
  /** Random spread of each gap, as a fraction (0.2 = ±20%). */
  jitter: number;
  /** Shortest gap while the host is busy, ms (≥ minIntervalMs). */
  busyIntervalMs: number;
}

export const DEFAULT_ADAPTIVE_PROBE: Readonly<AdaptiveProbeOptions> = Object.freeze({
  minIntervalMs: 1_000,
  maxIntervalMs: 30_000,
  growth: 1.5,
  shrink: 2,
  warmupSamples: 8,
  agreeError: 0.15,
  agreeToleranceMs: 5,
  fastFanout: 2,
  jitter: 0.2,
  busyIntervalMs: 3_000,
});

const check = optionChecker('adaptiveProbeOptions');

const positive = (v: number) => Number.isFinite(v) && v > 0;

/** Defaults merged with `partial`, validated; throws RangeError naming the bad option. */
export function adaptiveProbeOptions(partial: Partial<AdaptiveProbeOptions> = {}): AdaptiveProbeOptions {
  const o = mergeOptions('adaptiveProbeOptions', DEFAULT_ADAPTIVE_PROBE, partial);
  check(positive(o.minIntervalMs), `minIntervalMs must be a finite number > 0, got ${o.minIntervalMs}`);
  check(Number.isFinite(o.maxIntervalMs) && o.maxIntervalMs >= o.minIntervalMs,
    `maxIntervalMs must be finite and >= minIntervalMs (${o.minIntervalMs}), got ${o.maxIntervalMs}`);
  check(Number.isFinite(o.growth) && o.growth > 1, `growth must be a finite number > 1, got ${o.growth}`);
  check(Number.isFinite(o.shrink) && o.shrink >= 1, `shrink must be a finite number >= 1, got ${o.shrink}`);
  check(Number.isInteger(o.warmupSamples) && o.warmupSamples >= 0, `warmupSamples must be an integer >= 0, got ${o.warmupSamples}`);
  check(positive(o.agreeError), `agreeError must be a finite number > 0, got ${o.agreeError}`);
  check(Number.isFinite(o.agreeToleranceMs) && o.agreeToleranceMs >= 0, `agreeToleranceMs must be a finite number >= 0, got ${o.agreeToleranceMs}`);
  check(Number.isInteger(o.fastFanout) && o.fastFanout >= 1 && o.fastFanout <= 16, `fastFanout must be an integer in 1..16, got ${o.fastFanout}`);
  check(Number.isFinite(o.jitter) && o.jitter >= 0 && o.jitter < 1, `jitter must be in [0, 1), got ${o.jitter}`);
  // Clamped into [min, max] rather than refused: a caller that sets only minIntervalMs or maxIntervalMs keeps a valid busy gap.
  check(Number.isFinite(o.busyIntervalMs) && o.busyIntervalMs > 0, `busyIntervalMs must be a finite number > 0, got ${o.busyIntervalMs}`);
  o.busyIntervalMs = Math.min(o.maxIntervalMs, Math.max(o.minIntervalMs, o.busyIntervalMs));
  return o;
}

/** Whether a measured RTT agrees with the predicted one under `o`. */
export function sampleAgrees(predictedMs: number, measuredMs: number, o: Pick<AdaptiveProbeOptions, 'agreeError' | 'agreeToleranceMs'>): boolean {
  return Math.abs(predictedMs - measuredMs) <= Math.max(o.agreeToleranceMs, o.agreeError * measuredMs);
}

export class AdaptiveProbing {
  readonly opts: AdaptiveProbeOptions;
  private gapMs: number;
  /** Samples judged so far. */
  samples = 0;
  /** Of those, how many agreed. */
  agreed = 0;

  constructor(opts: Partial<AdaptiveProbeOptions> | AdaptiveProbeOptions, private readonly rng: Rng) {
    this.opts = adaptiveProbeOptions(opts);
    this.gapMs = this.opts.minIntervalMs;
  }

  /** The current gap between rounds, before jitter, ms. */
  get intervalMs(): number {
    return this.gapMs;
  }

  /** Probing at full speed: warming up, or samples disagree. */
  get fast(): boolean {
    return this.gapMs <= this.opts.minIntervalMs;
  }

  /** Warmed up and backing off: the coordinate fits what this node measures. */
  get settled(): boolean {
    return !this.fast;
  }

  /** Probes to send this round (one while the host is busy). */
  fanout(busy = false): number {
    return this.fast && !busy ? this.opts.fastFanout : 1;
  }

  /** The gap before the next round, jittered, ms; at least `busyIntervalMs` while the host is busy. */
  nextDelay(busy = false): number {
    const j = this.opts.jitter;
    const gap = busy ? Math.max(this.gapMs, this.opts.busyIntervalMs) : this.gapMs;
    return gap * (1 - j + 2 * j * this.rng.next());
  }

  /** Judges one sample: the RTT the coordinates predicted before it was
   * applied, and the one measured (after the caller's filtering). Returns
   * whether it agreed. */
  observe(predictedMs: number, measuredMs: number): boolean {
    const o = this.opts;
    const agrees = sampleAgrees(predictedMs, measuredMs, o);
    this.samples++;
    if (agrees) this.agreed++;
    if (this.samples > o.warmupSamples) {
      this.gapMs = agrees ? Math.min(o.maxIntervalMs, this.gapMs * o.growth) : Math.max(o.minIntervalMs, this.gapMs / o.shrink);
    }
    return agrees;
  }
}
