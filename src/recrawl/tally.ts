// The per-group tally ICR and CAF read at a round: one pass over the channel
// records in channel order (the simulator's way; window-stats.ts keeps the same
// figures as running aggregates for a manager).

import type { ChannelRecord, RecrawlState } from './state.js';

/** Update rate and mean download time of a channel from its last L updates.
 * rate = n / (now − oldest kept update + half a mean gap). The mean gap is taken
 * between the kept updates (or is the channel's current interval when only one is
 * kept). The half gap stands for the unseen time before the oldest kept update
 * (on average half a gap for periodic updates), which makes the estimate unbiased
 * for periodic updates and keeps a channel updated just now from being credited
 * with an absurd rate. meanDownload = mean of the kept download times. */
export function channelHistory(
  c: ChannelRecord,
  now: number,
  currentInterval: number,
): { rate: number; meanDownload: number | null } {
  const n = c.updateTimes.length;
  if (n === 0) return { rate: 0, meanDownload: null };
  let s = 0;
  for (const d of c.downloadTimes) s += d;
  const first = c.updateTimes[0]!;
  const last = c.updateTimes[n - 1]!;
  const gap = n >= 2 ? (last - first) / (n - 1) : currentInterval;
  const span = now - first + gap / 2;
  return { rate: span > 0 ? n / span : 0, meanDownload: s / n };
}

/** Per group: the channels (`members`), the sum of their change intervals and the
 * shortest of them (`changeMin`, Infinity for an empty group), the
 * sum of the mean download times t̄ of the channels with an update kept
 * (`tSum`) and how many have one (`tKnown`), the window's tasks submitted and
 * successful (`subBy`, `sucBy`); over all channels the same t̄ sum and count
 * (`allT`, `allN`), the observed load Σ λ·t̄ and the window's totals. */
export interface GroupTally {
  members: number[];
  changeSum: number[];
  changeMin: number[];
  tSum: number[];
  tKnown: number[];
  allT: number;
  allN: number;
  observedLoad: number;
  sub: number;
  suc: number;
  subBy: number[];
  sucBy: number[];
}

/** Sums the tally over the channel records in channel order. A channel's t̄ and
 * λ come from its last L updates (`channelHistory`). */
export function groupTally(state: RecrawlState, now: number): GroupTally {
  const k = state.groups.length;
  const zeros = (): number[] => new Array<number>(k).fill(0);
  const t: GroupTally = {
    members: zeros(),
    changeSum: zeros(),
    changeMin: new Array<number>(k).fill(Infinity),
    tSum: zeros(),
    tKnown: zeros(),
    allT: 0,
    allN: 0,
    observedLoad: 0,
    sub: 0,
    suc: 0,
    subBy: zeros(),
    sucBy: zeros(),
  };
  for (const c of state.channels) {
    const g = c.group;
    t.members[g]! += 1;
    t.changeSum[g]! += c.changeInterval;
    t.changeMin[g] = Math.min(t.changeMin[g]!, c.changeInterval);
    t.sub += c.subCount;
    t.suc += c.sucCount;
    t.subBy[g]! += c.subCount;
    t.sucBy[g]! += c.sucCount;
    const h = channelHistory(c, now, state.groups[g]!.interval);
    if (h.meanDownload === null) continue;
    t.tSum[g]! += h.meanDownload;
    t.tKnown[g]! += 1;
    t.allT += h.meanDownload;
    t.allN += 1;
    t.observedLoad += h.rate * h.meanDownload;
  }
  return t;
}
