// Formula (5) of the paper, the update quality of a recrawl strategy:
//
//   updateQuality = Σ_i R_i × λ_i^actual / λ_i^expected / N
//
// λ^expected of a channel is its change rate (1 / change interval: the rate
// FIXED would recrawl it at), λ^actual the rate it was really updated at,
// R_g = 2^(K-1-g) the weight of its priority group (group 0, the highest,
// weighs 16 with K = 5: the paper's weights 16, 8, 4, 2, 1). The unweighted
// mean and the per-group means are reported beside it.
//
// One implementation for the simulator and the manager. Callers differ only in
// how they measure λ^actual: the simulator counts successes over the whole run
// (every channel counts, an unserved one with 0); the manager estimates it from
// each channel's recent updates and passes null for a channel it never updated
// (no evidence yet: left out of N). Pure: no I/O, no clock; inputs are checked.

/** The group weights R_g = 2^(K-1-g), group 0 first. */
export function groupWeights(k: number): number[] {
  checkGroupCount(k);
  return Array.from({ length: k }, (_, g) => 2 ** (k - 1 - g));
}

export interface GroupQuality {
  group: number;
  weight: number;
  /** Channels of the group that were added. */
  channels: number;
  /** Of those, channels with a measured rate (the group's N). */
  measured: number;
  /** Mean of λ^actual / λ^expected over the measured channels; null when none. */
  quality: number | null;
}

export interface QualityReport {
  /** Formula (5); null when no channel was measured. */
  weighted: number | null;
  unweighted: number | null;
  groups: GroupQuality[];
}

function checkGroupCount(k: number): void {
  if (!(Number.isInteger(k) && k >= 1 && k <= 64)) throw new RangeError(`update quality: group count must be an integer in 1..64 (got ${k})`);
}

/** Sums formula (5) over channels added one by one (no per-channel allocation: the manager
 * reports over a million channels). */
export class UpdateQualitySum {
  private readonly weights: number[];
  private readonly sum: number[];
  private readonly measured: number[];
  private readonly size: number[];
  private sumAll = 0;
  private sumWeighted = 0;
  private n = 0;

  constructor(readonly groupCount: number) {
    this.weights = groupWeights(groupCount);
    this.sum = new Array<number>(groupCount).fill(0);
    this.measured = new Array<number>(groupCount).fill(0);
    this.size = new Array<number>(groupCount).fill(0);
  }

  /**
   * One channel: its group, its actual update rate (null: not measured, left out of N)
   * and its change interval (1 / λ^expected), rate and interval in one time unit.
   */
  add(group: number, actualRate: number | null, changeInterval: number): void {
    if (!(Number.isInteger(group) && group >= 0 && group < this.groupCount)) throw new RangeError(`update quality: group must be an integer in 0..${this.groupCount - 1} (got ${group})`);
    if (!(changeInterval > 0 && Number.isFinite(changeInterval))) throw new RangeError(`update quality: change interval must be finite and > 0 (got ${changeInterval})`);
    if (actualRate !== null && !(actualRate >= 0 && Number.isFinite(actualRate))) throw new RangeError(`update quality: actual rate must be finite and ≥ 0 or null (got ${actualRate})`);
    this.size[group]! += 1;
    if (actualRate === null) return;
    // λ^actual / λ^expected = actual rate × change interval
    const ratio = actualRate * changeInterval;
    this.sumAll += ratio;
    this.sumWeighted += this.weights[group]! * ratio;
    this.sum[group]! += ratio;
    this.measured[group]! += 1;
    this.n++;
  }

  result(): QualityReport {
    const n = this.n;
    return {
      weighted: n > 0 ? this.sumWeighted / n : null,
      unweighted: n > 0 ? this.sumAll / n : null,
      groups: this.weights.map((weight, g) => ({
        group: g,
        weight,
        channels: this.size[g]!,
        measured: this.measured[g]!,
        quality: this.measured[g]! > 0 ? this.sum[g]! / this.measured[g]! : null,
      })),
    };
  }
}

export interface ChannelRates {
  group: number;
  actualRate: number | null;
  changeInterval: number;
}

/** Formula (5) over a list of channels. */
export function updateQuality(channels: Iterable<ChannelRates>, groupCount: number): QualityReport {
  const q = new UpdateQualitySum(groupCount);
  for (const c of channels) q.add(c.group, c.actualRate, c.changeInterval);
  return q.result();
}
