// Virtual time for the test web and the ground truth it drives: each page of
// a site changes on its own seeded Poisson schedule (mean changesPerDay per
// virtual day), drawn lazily as the clock moves. Apart from the server because
// freshness is measured against this schedule, not against what was served.
import { createRng, deriveSeed, exponential, type Rng } from '../../src/rng.js';

/** A virtual clock for page changes. */
export class TestClock {
  constructor(private t: number) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError('the clock only moves forward');
    this.t += ms;
  }
  set(t: number): void {
    if (t < this.t) throw new RangeError('the clock only moves forward');
    this.t = t;
  }
}

const DAY = 86_400_000;

/** When each page of one site changed: the ground truth a crawl's freshness is measured against. */
export class ChangeSchedule {
  private readonly changeRng: Rng[] = [];
  private readonly changes: number[][] = [];

  constructor(
    /** Mean page changes per page per virtual day (0 = static). */
    private readonly changesPerDay: number,
    /** The site's name, part of each page's seed. */
    private readonly site: string,
    private readonly seed: number,
    /** Before the first change every page has this time (the web's epoch). */
    private readonly epoch: number,
  ) {}

  /** The times page i changed, up to time t. */
  changeTimes(i: number, t: number): number[] {
    const rate = this.changesPerDay;
    if (rate <= 0) return [];
    let ch = this.changes[i];
    let rng = this.changeRng[i];
    if (!ch || !rng) {
      ch = [];
      rng = createRng(deriveSeed(this.seed, `${this.site}/${i}`));
      this.changes[i] = ch;
      this.changeRng[i] = rng;
    }
    const mean = DAY / rate;
    while (ch.length === 0 || (ch[ch.length - 1] as number) <= t) {
      const prev = ch.length === 0 ? this.epoch : (ch[ch.length - 1] as number);
      ch.push(prev + Math.max(1, exponential(rng, mean)));
    }
    return ch.filter((c) => c <= t);
  }
}
