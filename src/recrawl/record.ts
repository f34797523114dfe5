// What the caller tells a strategy between rounds: tasks submitted, updates
// that succeeded (with their download time), failures and why, and the
// crawlers' load.

import type { RecrawlState, SystemLoad } from './state.js';

/** Why a task failed: its crawler vanished ('lost'), no crawler had room
 * ('refused'), it waited past its deadline ('expired'), or not said ('other'). */
export type FailureKind = 'lost' | 'refused' | 'expired' | 'other';

export function recordSubmit(state: RecrawlState, channel: number, _t: number): void {
  state.channels[channel]!.subCount += 1;
}

export function recordSuccess(state: RecrawlState, channel: number, t: number, downloadTime: number): void {
  const c = state.channels[channel]!;
  c.sucCount += 1;
  c.gapSum += t - (c.lastUpdate ?? state.createdAt);
  c.lastUpdate = t;
  c.updateTimes.push(t);
  c.downloadTimes.push(downloadTime);
  const L = state.options.historyLength;
  while (c.updateTimes.length > L) {
    c.updateTimes.shift();
    c.downloadTimes.shift();
  }
  if (c.group === 0 && c.sucCount === state.options.triggerUpdates + 1) state.triggerCount += 1;
  // CAF: a success says the channel's crawlers have room again.
  if (c.backoff !== undefined && c.backoff !== 1) c.backoff = 1 + (c.backoff - 1) / 2;
}

export function recordFailure(state: RecrawlState, channel: number, t: number, kind: FailureKind = 'other'): void {
  state.channels[channel]!.failCount += 1;
  // A crawler's departure says nothing about room.
  if (kind === 'refused' || kind === 'expired') recordNoRoom(state, channel, t);
}

/** The channel's task found no crawler with room (refused, held beyond a full
 * queue, or expired waiting). CAF recrawls such a channel less often, so the
 * submissions that would wait or fail there go to channels whose crawlers have
 * room; the other strategies ignore it. */
export function recordNoRoom(state: RecrawlState, channel: number, _t: number): void {
  const o = state.options;
  if (o.strategy !== 'caf') return;
  const c = state.channels[channel]!;
  c.backoff = Math.min(o.cafMaxBackoff, (c.backoff ?? 1) * o.cafBackoff);
}

/** Records the crawlers' load as they report it (CAF steers on it; the others ignore it). */
export function observeLoad(state: RecrawlState, load: SystemLoad): void {
  if (!(load.threads >= 0 && load.running >= 0 && load.queued >= 0)) throw new RangeError('observeLoad: counts must be >= 0');
  state.load = { threads: load.threads, running: load.running, queued: load.queued };
}
