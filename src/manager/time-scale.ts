// Compressed time for demos and test networks (`dht-manager serve --time-scale X`,
// `npm run demo -- --speed X`): the manager keeps its real clock — task deadlines
// are compared on the volunteers' real clocks — and instead every duration it
// uses is divided by X: group intervals, the interval floor, the round gap and
// CAF's round period, the retry delay, task timeouts and the upload grace. Change-rate estimates are then
// in compressed minutes too, so the strategies and the rate cap see a consistent
// world. Timeouts keep floors a real network needs (a crawl and an upload take
// real seconds whatever the scale).
import { DEFAULT_RECRAWL_OPTIONS } from '../recrawl/index.js';
import { DEFAULT_GROUP_INTERVALS, MINUTE } from './domain/scheduler.js';
import type { ManagerOptions } from './manager.js';

export const MAX_TIME_SCALE = 100_000;

/** Manager options with every duration compressed by `scale` (1 = real time). */
export function timeScaledOptions(scale: number): Partial<ManagerOptions> {
  if (scale === 1) return {};
  return {
    groupIntervals: DEFAULT_GROUP_INTERVALS.map((m) => m / scale),
    recrawl: { minInterval: 5 / scale, maxRoundGap: (24 * 60) / scale, cafPeriod: DEFAULT_RECRAWL_OPTIONS.cafPeriod / scale },
    retryDelayMs: Math.max(1000, (5 * MINUTE) / scale),
    taskTimeoutMinMs: Math.max(8000, (10 * MINUTE) / scale),
    taskTimeoutMaxMs: Math.max(20_000, (6 * 60 * MINUTE) / scale),
    graceMs: Math.max(4000, (5 * MINUTE) / scale),
  };
}
