// The two places where the simulator's model must choose between the paper's
// words and another reading (docs/sim.md, "Faithful mode"), and what a task costs.
//
// `fullSystem`: what happens to a task that no crawler the routing reached had
//   room for. 'reject' (the earlier reading): it fails at once. 'hold' (the paper, §4:
//   "the newly submitted task is forwarded to a less loaded crawler", rejection
//   is never mentioned): it waits at the first crawler the routing tried,
//   beyond that crawler's 5 queue slots, until it starts or its deadline passes.
// `rttRule`: the RTT charged per page. 'physical' (the earlier reading): the latency
//   matrix's value, which is a measured RTT in both the PlanetLab and the King
//   data. 'paper' (§4: "The RTT equals to 2 times the network latency", on
//   p2psim, which delays each packet by the King value one-way): 2 × the value.
// ICR's encourage step (system-wide or per group) is a recrawl option
// (src/recrawl, `icrEncourage`), not a simulator one.
import type { IcrEncourage } from '../src/recrawl/index.js';
import type { World } from './world.js';
import { hostCrawlerRtt } from './world.js';

export type FullSystemRule = 'reject' | 'hold';
export type RttRule = 'physical' | 'paper';

export interface SimModel {
  fullSystem: FullSystemRule;
  rttRule: RttRule;
}

/** The readings the tables before issue 12 used (`--no-faithful`). */
export const EARLIER_MODEL: Readonly<SimModel> = Object.freeze({ fullSystem: 'reject', rttRule: 'physical' });
/** Every reading that follows the paper's words. */
export const FAITHFUL_MODEL: Readonly<SimModel> = Object.freeze({ fullSystem: 'hold', rttRule: 'paper' });
/** The one default of every entry point (`sim run`, `sim sweep`, runScenario,
 * simulate): the paper's readings. */
export const DEFAULT_MODEL: Readonly<SimModel> = FAITHFUL_MODEL;
/** ICR's encourage scope that goes with them (per group, as the paper's IIR;
 * the recrawl module's own default, for the manager, stays system-wide). */
export const DEFAULT_ICR_ENCOURAGE: IcrEncourage = 'group';

/** What a run reads the paper as: the model's readings and ICR's encourage scope. */
export interface SimReadings {
  model: SimModel;
  icrEncourage: IcrEncourage;
}

/** The readings of a run: the paper's (faithful, the default) or the earlier
 * ones, each overridden by an explicit choice. */
export function simReadings(faithful = true, over: Partial<SimModel> & { icrEncourage?: IcrEncourage } = {}): SimReadings {
  const base = faithful ? FAITHFUL_MODEL : EARLIER_MODEL;
  return {
    model: { fullSystem: over.fullSystem ?? base.fullSystem, rttRule: over.rttRule ?? base.rttRule },
    icrEncourage: over.icrEncourage ?? (faithful ? DEFAULT_ICR_ENCOURAGE : 'system'),
  };
}

/** Per-page RTT multiplier of the rule. */
export function rttMultiplier(rule: RttRule): number {
  return rule === 'paper' ? 2 : 1;
}

/**
 * Download time (minutes) of channel h's task on crawler c, and the RTT (ms) it
 * is measured at (the matrix value, whatever the rule charges): Σ over pages of (RTT + wait) plus the transfer of the channel's
 * bytes at the crawler's per-thread share of its bandwidth. One GET per page on
 * a persistent connection without pipelining, as the paper's crawler does.
 */
export interface TaskCost {
  minutes: number;
  rttMs: number;
}

/** Writes into `out` (the engine calls this millions of times). */
export function taskCost(world: World, h: number, c: number, rttFactor: number, out: TaskCost): TaskCost {
  const rtt = hostCrawlerRtt(world, h, c);
  const cfg = world.config;
  const kbpsPerThread = world.bandwidthKbps[c]! / cfg.threads;
  const transferMs = ((world.bytes[h]! * 8) / 1000 / kbpsPerThread) * 1000;
  const ms = world.pages[h]! * (rtt * rttFactor + cfg.waitMs) + transferMs;
  out.minutes = ms / 60_000;
  out.rttMs = rtt;
  return out;
}
