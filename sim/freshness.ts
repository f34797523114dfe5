// True freshness and age (Cho & Garcia-Molina) of the stored copies against a
// simulated Poisson change process: one random stream per channel, so the
// change times are the same whatever the strategy does. A copy is fresh from a
// successful update until the channel's next change; its age is the time since
// the first change after the last update. Both are time-averaged over the run
// (every copy is fresh at t = 0).
import type { Rng } from '../src/rng.js';
import { createRng, deriveSeed, exponential } from '../src/rng.js';

export class FreshnessTracker {
  private readonly rng: Rng[];
  private readonly nextChange: Float64Array;
  private readonly lastSync: Float64Array;
  private readonly freshTime: Float64Array;
  private readonly ageIntegral: Float64Array;

  constructor(
    private readonly changeInterval: Float64Array,
    seed: number,
  ) {
    const H = changeInterval.length;
    this.rng = new Array<Rng>(H);
    this.nextChange = new Float64Array(H);
    this.lastSync = new Float64Array(H);
    this.freshTime = new Float64Array(H);
    this.ageIntegral = new Float64Array(H);
    for (let h = 0; h < H; h++) {
      const r = createRng(deriveSeed(seed, `change:${h}`));
      this.rng[h] = r;
      this.nextChange[h] = exponential(r, changeInterval[h]!);
    }
  }

  /** Accounts channel h's copy from its last update to t. */
  private close(h: number, t: number): void {
    const c = this.nextChange[h]!;
    this.freshTime[h] = this.freshTime[h]! + Math.min(c, t) - this.lastSync[h]!;
    if (c < t) this.ageIntegral[h] = this.ageIntegral[h]! + ((t - c) * (t - c)) / 2;
  }

  /** Channel h was updated at t. */
  update(h: number, t: number): void {
    this.close(h, t);
    const mean = this.changeInterval[h]!;
    const r = this.rng[h]!;
    let c = this.nextChange[h]!;
    while (c <= t) c += exponential(r, mean);
    this.nextChange[h] = c;
    this.lastSync[h] = t;
  }

  /** Closes the books at T: time-averaged freshness and age (minutes) per channel. */
  finish(T: number): { freshness: Float64Array; age: Float64Array } {
    const H = this.changeInterval.length;
    const freshness = new Float64Array(H);
    const age = new Float64Array(H);
    for (let h = 0; h < H; h++) {
      this.close(h, T);
      this.lastSync[h] = T;
      freshness[h] = this.freshTime[h]! / T;
      age[h] = this.ageIntegral[h]! / T;
    }
    return { freshness, age };
  }
}
