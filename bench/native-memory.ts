// Where a Linux process's resident memory is, from /proc/<pid>/smaps (bench:manager
// --smaps, bench:node --detail): what V8's own counters (process.memoryUsage) cannot say — glibc's
// arenas, the worker threads' isolates, mapped files. Categories, in MB:
//   arenas  glibc's per-thread malloc arenas (64 MiB-aligned anonymous regions that,
//           with their reserved tail, make 64 MiB): LevelDB's and libuv's threads,
//           the worker threads' native allocations;
//   brk     the main thread's malloc arena ([heap]);
//   anon    every other anonymous mapping: V8's heaps (this isolate's heapTotal and
//           the worker threads' isolates), large malloc blocks, thread stacks;
//   files   mapped files (the node binary and libraries, LevelDB's tables);
//   tables  the part of `files` that is LevelDB's table files (*.ldb, *.sst), which
//           LevelDB maps to read them (up to 1 000 at once; see docs/manager.md).
import { readFileSync } from 'node:fs';

export interface NativeMemory {
  arenas: number;
  brk: number;
  anon: number;
  files: number;
  tables: number;
}

const ARENA = 1n << 26n;

/** A process's resident memory by category (MB; this process unless `pid`), or null where /proc/<pid>/smaps is missing. */
export function nativeMemory(pid: number | 'self' = 'self'): NativeMemory | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return null;
  }
  const regions: { start: bigint; end: bigint; reserved: boolean; name: string; rssKb: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m !== null) {
      regions.push({ start: BigInt('0x' + m[1]!), end: BigInt('0x' + m[2]!), reserved: m[3]!.startsWith('---'), name: m[4]!.trim(), rssKb: 0 });
      continue;
    }
    const r = /^Rss:\s+(\d+) kB/.exec(line);
    if (r !== null && regions.length > 0) regions[regions.length - 1]!.rssKb = Number(r[1]);
  }
  const kb = { arenas: 0, brk: 0, anon: 0, files: 0, tables: 0 };
  regions.forEach((r, i) => {
    if (r.name.startsWith('/')) {
      kb.files += r.rssKb;
      if (/\.(ldb|sst)( \(deleted\))?$/.test(r.name)) kb.tables += r.rssKb;
    } else if (r.name === '[heap]') kb.brk += r.rssKb;
    else if (r.name === '' && r.start % ARENA === 0n && arenaSize(r, regions[i + 1]) === ARENA) kb.arenas += r.rssKb;
    else kb.anon += r.rssKb;
  });
  const mb = (x: number) => Math.round(x / 1024);
  return { arenas: mb(kb.arenas), brk: mb(kb.brk), anon: mb(kb.anon), files: mb(kb.files), tables: mb(kb.tables) };
}

function arenaSize(r: { start: bigint; end: bigint }, next: { start: bigint; end: bigint; reserved: boolean } | undefined): bigint {
  return r.end - r.start + (next !== undefined && next.reserved && next.start === r.end ? next.end - next.start : 0n);
}
