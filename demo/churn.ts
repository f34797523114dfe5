// The demo's churn model (--churn), the simulator's (sim/world.ts defaults:
// lifetime N(1000, 200), offline N(600, 200), a departure announced with
// p = 1/3) scaled to the run: with L = duration / 3 a volunteer stays up
// N(L, L/5), leaves — gracefully (SIGTERM: it migrates its tasks) with p = 1/3,
// silently (SIGKILL: its tasks fail at their deadline) otherwise — stays away
// N(0.6 L, 0.2 L) and rejoins with the same identity. Seeded.
import { createRng, deriveSeed, normal, uniform, type Rng } from '../src/rng.js';

export interface ChurnStats {
  graceful: number;
  silent: number;
  rejoins: number;
}

export interface ChurnMember {
  /** Sends the signal; resolves once the process is gone. */
  leave(signal: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  rejoin(): void;
}

export class Churn {
  readonly stats: ChurnStats = { graceful: 0, silent: 0, rejoins: 0 };
  private readonly rng: Rng;
  private readonly L: number;
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private stopped = false;

  constructor(seed: number, durationMs: number) {
    this.rng = createRng(deriveSeed(seed, 'demo-churn'));
    this.L = durationMs / 3;
  }

  /** Starts churning a member that has just started with everyone else. */
  add(m: ChurnMember): void {
    // Everyone starts at t = 0: the first stay is a residual lifetime U(L/4, 5L/4), so they do not all leave together.
    this.scheduleLeave(m, uniform(this.rng, this.L / 4, (5 * this.L) / 4));
  }

  /** No more departures or rejoins. */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopped) fn();
    }, ms);
    this.timers.add(t);
  }

  private scheduleLeave(m: ChurnMember, upMs: number): void {
    this.later(Math.max(2000, upMs), () => {
      const graceful = this.rng.next() < 1 / 3;
      if (graceful) this.stats.graceful++;
      else this.stats.silent++;
      const away = Math.max(1000, normal(this.rng, 0.6 * this.L, 0.2 * this.L));
      void m.leave(graceful ? 'SIGTERM' : 'SIGKILL').then(() =>
        this.later(away, () => {
          this.stats.rejoins++;
          m.rejoin();
          this.scheduleLeave(m, normal(this.rng, this.L, this.L / 5));
        }),
      );
    });
  }
}
