// Gives an idle volunteer's V8 heap back to the computer. A process that
// allocates little reaches its next full collection late, and until then its
// old space keeps pages committed that hold only garbage: the heaviest of 10
// idle volunteers (bench:node --detail, every run of main) had old space
// 21.5–25 MB committed for 15.5–18.8 MB used — the 5–9 MB between it and
// the others. Every `everyMs`, while the node runs no task, it looks at that
// slack and, past `slackBytes`, asks V8 for a full collection (which compacts
// and frees the empty pages). A collection of an idle join's heap takes
// 20–70 ms of CPU on a loaded machine and is needed a few times an hour at
// most; while tasks run, V8's own schedule is left alone.
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { NodeService } from './node-types.js';

export const IDLE_HEAP_CHECK_MS = 30_000;
export const IDLE_HEAP_SLACK_BYTES = 3 * 2 ** 20;

/** Bytes V8's old space has committed beyond what its objects use. */
export function oldSpaceSlack(): number {
  const old = getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
  return old === undefined ? 0 : Math.max(0, old.physical_space_size - old.space_used_size);
}

/** V8's full collection (`--expose-gc`, set here and read by a fresh context: the process's own globals stay as they were). */
export function fullCollection(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

export interface IdleHeapOptions {
  /** Whether the node runs or holds no task. */
  isIdle: () => boolean;
  everyMs?: number;
  slackBytes?: number;
  /** Seams for tests (default: oldSpaceSlack, fullCollection()). */
  slack?: () => number;
  collect?: () => void;
}

/** One look: collects when idle and the slack is past the bound; returns whether it did. */
export function trimIfIdle(o: Required<Pick<IdleHeapOptions, 'isIdle' | 'slack' | 'collect'>> & { slackBytes: number }): boolean {
  if (!o.isIdle() || o.slack() <= o.slackBytes) return false;
  o.collect();
  return true;
}

export function idleHeapService(o: IdleHeapOptions): NodeService & { readonly collections: number } {
  let timer: NodeJS.Timeout | undefined;
  let collections = 0;
  return {
    name: 'idle-heap',
    get collections() {
      return collections;
    },
    start() {
      const collect = o.collect ?? fullCollection();
      const look = { isIdle: o.isIdle, slack: o.slack ?? oldSpaceSlack, collect, slackBytes: o.slackBytes ?? IDLE_HEAP_SLACK_BYTES };
      timer = setInterval(() => {
        if (trimIfIdle(look)) collections++;
      }, o.everyMs ?? IDLE_HEAP_CHECK_MS);
      timer.unref();
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
    },
  };
}
