// Which RTT samples this process's own event loop spoiled, and whether the
// host is busy. A probe is timed in JavaScript: when the event loop is stalled
// (garbage collection, a burst of handshakes, a PC busy with its owner's work)
// the reply waits in the socket and the stall is measured as network distance.
// Such a sample disagrees with the coordinates, the probing pace speeds up,
// the extra probes load the loop further — a loop that kept a loaded test
// network probing at full speed with coordinates that never settled. So:
//
// - A timer that should fire every `tickMs` records how late it fired (its
//   lateness is how long the loop was stalled just before it). `LoopLag`
//   keeps the recent ticks and answers "how long had the loop been stalled
//   when it read this message" and "how stalled lately". Only a stall still
//   going on when the reply arrived delays its reading: one that ended
//   earlier in the probe's window left the loop free before the reply came
//   (a reply that had arrived is read in the same loop iteration the stall
//   ends in), so only stalls that end within `tickMs` of the read count.
// - A sample whose read was delayed by a stall longer than `max(toleranceMs,
//   fraction × RTT)` (either side's: the responder reports how long its loop
//   was stalled when it read the request) is dropped: it neither feeds
//   Vivaldi nor counts toward the pace.
// - A host whose loop was late for more than `busyShare` of the last
//   `recentMs` is busy (one long garbage collection is not: a share is): the pace does not
//   speed up past its busy gap (adaptive.ts), so a volunteer whose owner is
//   using the PC measures less.
//
// Pure: the caller's timer feeds `record` with its own clock's readings.

import { mergeOptions } from '../options.js';

export interface LoopLagOptions {
  /** Gap the caller's timer is set to, ms (a tick's window is [at − tickMs − late, at]). */
  tickMs: number;
  /** Ticks kept (older ones are forgotten). */
  keep: number;
  /** A stall shorter than this never spoils a sample, ms. */
  toleranceMs: number;
  /** …nor one shorter than this fraction of the RTT measured. */
  fraction: number;
  /** The host is busy when its loop was late for more than this share of the last `recentMs`. */
  busyShare: number;
  /** "Recent" for `busy` and `recentMs`, ms. */
  recentMs: number;
}

export const DEFAULT_LOOP_LAG: Readonly<LoopLagOptions> = Object.freeze({
  tickMs: 50,
  keep: 1_200,
  toleranceMs: 20,
  fraction: 0.2,
  busyShare: 0.1,
  recentMs: 10_000,
});

/** Defaults merged with `partial`, validated; throws RangeError naming the bad option. */
export function loopLagOptions(partial: Partial<LoopLagOptions> = {}): LoopLagOptions {
  const o = mergeOptions('loopLagOptions', DEFAULT_LOOP_LAG, partial);
  for (const k of ['tickMs', 'recentMs'] as const) {
    if (!(Number.isFinite(o[k]) && o[k] > 0)) throw new RangeError(`loopLagOptions: ${k} must be a finite number > 0, got ${o[k]}`);
  }
  for (const k of ['toleranceMs', 'fraction', 'busyShare'] as const) {
    if (!(Number.isFinite(o[k]) && o[k] >= 0)) throw new RangeError(`loopLagOptions: ${k} must be a finite number >= 0, got ${o[k]}`);
  }
  if (!(Number.isInteger(o.keep) && o.keep >= 1)) throw new RangeError(`loopLagOptions: keep must be an integer >= 1, got ${o.keep}`);
  return o;
}

/** Whether a sample of `rttMs` taken while the loops (ours and the responder's)
 * were stalled for `stallMs` in all is spoiled. */
export function spoiledBy(stallMs: number, rttMs: number, o: Pick<LoopLagOptions, 'toleranceMs' | 'fraction'>): boolean {
  return stallMs > Math.max(o.toleranceMs, o.fraction * rttMs);
}

export class LoopLag {
  readonly opts: LoopLagOptions;
  /** Ring of ticks: when each fired and how late. */
  private readonly at: Float64Array;
  private readonly late: Float64Array;
  private next = 0;
  private size = 0;

  constructor(opts: Partial<LoopLagOptions> = {}) {
    this.opts = loopLagOptions(opts);
    this.at = new Float64Array(this.opts.keep);
    this.late = new Float64Array(this.opts.keep);
  }

  /** A tick fired at `at`, `lateMs` after it was due. */
  record(at: number, lateMs: number): void {
    this.at[this.next] = at;
    this.late[this.next] = Math.max(0, lateMs);
    this.next = (this.next + 1) % this.opts.keep;
    this.size = Math.min(this.size + 1, this.opts.keep);
  }

  /** The longest stall that overlapped [from, to], ms. A tick that fired at
   * `at`, `late` ms late, stood for a stall in [at − late, at]. A stall still
   * going on at `to` shows only once its tick fires: ask after the next tick
   * for an exact answer (the caller does, at its next round). */
  stallDuring(from: number, to: number): number {
    let worst = 0;
    for (let k = 0; k < this.size; k++) {
      const at = this.at[k]!;
      const late = this.late[k]!;
      if (at >= from && at - late <= to && late > worst) worst = late;
    }
    return worst;
  }

  /** The longest stall in the last `recentMs` before `now`, ms. */
  recent(now: number): number {
    return this.stallDuring(now - this.opts.recentMs, now);
  }

  /** The share of the last `recentMs` before `now` that the loop spent late (0–1). */
  lateShare(now: number): number {
    const from = now - this.opts.recentMs;
    let late = 0;
    for (let k = 0; k < this.size; k++) {
      const at = this.at[k]!;
      if (at > from && at <= now) late += Math.min(this.late[k]!, at - from);
    }
    return Math.min(1, late / this.opts.recentMs);
  }

  /** Whether the host is busy: its loop was late for more than `busyShare` of the last `recentMs`. */
  busy(now: number): boolean {
    return this.lateShare(now) > this.opts.busyShare;
  }

  /** How long the loop had been stalled when it read a message at `t`, ms:
   * the longest stall that was going on at `t` or ended less than `tickMs`
   * before it. Ask after the next tick (a stall ending with the read shows
   * only then). */
  stallAt(t: number): number {
    return this.stallDuring(t - this.opts.tickMs, t);
  }

  /** Whether a sample of `rttMs` read at `readAt` is spoiled by our stall plus the responder's `remoteStallMs`. */
  spoils(readAt: number, rttMs: number, remoteStallMs = 0): boolean {
    return spoiledBy(this.stallAt(readAt) + remoteStallMs, rttMs, this.opts);
  }
}
