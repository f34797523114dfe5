// The process's event-loop stall tracker as the coordinate service sees it:
// one timer however many nodes the process hosts (a test network runs several
// per process), running while any CoordService uses it. Apart from
// coord-protocol.ts because it is process-wide state with its own life cycle
// (reference-counted), not part of any one service.
import { LoopLag } from '../coords/index.js';

/** Where a CoordService learns of event-loop stalls. */
export interface LagSource {
  readonly lag: LoopLag;
  /** Resolves once the tracker has recorded a tick after this call (a stall that just ended is then known). */
  nextTick(): Promise<void>;
  release(): void;
}

let shared: { lag: LoopLag; users: number; timer: ReturnType<typeof setInterval>; waiters: (() => void)[] } | undefined;

export function processLag(): LagSource {
  if (shared === undefined) {
    const lag = new LoopLag();
    const s = { lag, users: 0, timer: undefined as unknown as ReturnType<typeof setInterval>, waiters: [] as (() => void)[] };
    let last = performance.now();
    s.timer = setInterval(() => {
      const now = performance.now();
      lag.record(now, now - last - lag.opts.tickMs);
      last = now;
      const w = s.waiters;
      s.waiters = [];
      for (const f of w) f();
    }, lag.opts.tickMs);
    s.timer.unref?.();
    shared = s;
  }
  const s = shared;
  s.users++;
  let released = false;
  return {
    lag: s.lag,
    nextTick: () => new Promise<void>((resolve) => (shared === s ? s.waiters.push(resolve) : resolve())),
    release: () => {
      if (released) return;
      released = true;
      if (--s.users > 0) return;
      clearInterval(s.timer);
      for (const f of s.waiters) f();
      if (shared === s) shared = undefined;
    },
  };
}
