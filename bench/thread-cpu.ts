// CPU time per thread of this process, from /proc/self/task/*/stat (Linux; bench:manager
// --threads): which thread a phase's CPU went to — the main thread, the WARC worker,
// LevelDB's compaction thread, libuv's pool (LevelDB reads and writes, zlib), V8's
// helpers (concurrent marking, sweeping). Threads are told apart by their id and name
// (node names its main thread "node", V8's helpers "V8 DefaultWorke", libuv's pool
// "libuv-worker"; the others inherit "node").
import { readdirSync, readFileSync } from 'node:fs';

/** CPU ms (user + system) per thread, keyed "name/tid"; empty where /proc is missing. */
export function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended
    }
    const close = stat.lastIndexOf(')');
    const name = stat.slice(stat.indexOf('(') + 1, close);
    const f = stat.slice(close + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), in clock ticks (100 per second on Linux).
    out.set(`${name}/${tid}`, (Number(f[11]) + Number(f[12])) * 10);
  }
  return out;
}

/** Adds what each thread used between `before` and `after` into `into`. */
export function addThreadCpu(into: Map<string, number>, before: Map<string, number>, after: Map<string, number>): void {
  for (const [k, v] of after) {
    const d = v - (before.get(k) ?? 0);
    if (d > 0) into.set(k, (into.get(k) ?? 0) + d);
  }
}

/** The threads that used at least `minMs`, busiest first, as { "name/tid": ms }. */
export function busiest(m: Map<string, number>, minMs = 50): Record<string, number> {
  return Object.fromEntries([...m].filter(([, v]) => v >= minMs).sort((a, b) => b[1] - a[1]));
}
