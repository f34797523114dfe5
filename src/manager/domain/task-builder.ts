// A channel's crawler task (paper §2.1 fields), trimmed to fit an order, and
// the task id scheme. Pure.
import { TASK_LIMITS, type KnownPage, type Task } from '../../crawler/task.js';
import type { KnownEntry } from './records.js';
import type { Channel } from './channel.js';

/** How much of a channel's stored knowledge one order carries. `knownBytes`
 * bounds the known list's JSON (an order's task is ≤ 1 MiB, signing.ts), which
 * archived captures (payload digest and date, `--archive full`) make ≈ 70 bytes
 * longer per page. */
const BUDGET = { known: 5000, knownBytes: 640 * 1024, digests: 60_000, interDigests: 20_000 } as const;

/** About the bytes a known entry takes in the task's JSON. */
function knownBytes(e: KnownEntry): number {
  return 48 + e.url.length + (e.etag?.length ?? 0) + (e.lastModified?.length ?? 0) + (e.payloadDigest !== undefined ? 75 : 0);
}

/** The known entries an order carries: at most BUDGET.known, and BUDGET.knownBytes of JSON. */
function knownForOrder(known: KnownEntry[]): KnownEntry[] {
  let bytes = 0;
  let n = 0;
  while (n < known.length && n < BUDGET.known) {
    bytes += knownBytes(known[n]!);
    if (bytes > BUDGET.knownBytes) break;
    n++;
  }
  return n === known.length ? known : known.slice(0, n);
}

/** A task id: `<channel>.<issue time, base 36>.<sequence, base 36>`. */
export function taskId(channel: string, now: number, seq: number): string {
  return `${channel}.${now.toString(36)}.${seq.toString(36)}`;
}

/** The channel id of a task id. */
export function channelOfTask(taskId: string): string {
  const i = taskId.indexOf('.');
  return i < 0 ? taskId : taskId.slice(0, i);
}

/** Builds the crawler task for a channel, trimmed to fit an order. */
export function buildTask(ch: Channel, id: string, deadline: number, known: KnownEntry[], inter: string[], xd: number[]): Task {
  const seeds = [...new Set([...ch.seeds, ...inter])].slice(0, Math.min(TASK_LIMITS.seeds, 2000));
  const k = knownForOrder(known);
  const digests = known.length > BUDGET.digests ? known.slice(0, BUDGET.digests) : known;
  return {
    id,
    scope: { origin: ch.origin, pathPrefixes: ch.pathPrefixes },
    seeds,
    filters: ch.filters,
    expectedPages: Math.min(TASK_LIMITS.expectedPages, Math.max(ch.expectedPages, known.length)),
    maxDepth: ch.depth,
    maxPages: ch.maxPages,
    pageDigests: digests.map((e) => e.digest),
    interSiteDigests: xd.length > BUDGET.interDigests ? xd.slice(xd.length - BUDGET.interDigests) : xd,
    known: k.map((e) => {
      const o: KnownPage = { url: e.url, digest: e.digest, depth: e.depth };
      if (e.etag !== undefined) o.etag = e.etag;
      if (e.lastModified !== undefined) o.lastModified = e.lastModified;
      if (e.payloadDigest !== undefined && e.capturedAt !== undefined) {
        o.payloadDigest = e.payloadDigest;
        o.capturedAt = e.capturedAt;
      }
      return o;
    }),
    deadline,
    delayMs: ch.delayMs,
  };
}
