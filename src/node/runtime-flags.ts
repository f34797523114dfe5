// How Node runs a volunteer: what the executable's first line sets
// (`#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=2 --optimize-for-size`,
// src/node/cli.ts; test/node/idle-join.test.ts holds the two equal), and what
// everything that starts `node <script> join` itself must pass too: the
// systemd unit (service.ts), the test networks and benchmarks (testbed/).
//
// Why, measured on an idle `join` (docs/node.md, "A light node"):
// - MALLOC_ARENA_MAX=2: glibc gives each thread that allocates (V8's workers,
//   libuv's pool) an arena of its own that keeps what was freed in it; read
//   only when the process starts, ignored by other C libraries. The manager's
//   launcher sets it too (src/manager/dht-manager.sh).
// - --max-semi-space-size=2 (MB): V8's young generation, 16 MB by default,
//   grows during start-up and stays resident until a full collection an idle
//   node may not make for a long time. Only a flag given at start caps it:
//   set from inside (v8.setFlagsFromString, what cli.ts still does for a
//   `join` started without it) it left new space at 16 MB in 8 of 9 samples.
// - --optimize-for-size: V8 treats the heap as memory-constrained — it grows
//   the old generation by a small factor after each full collection, and
//   its collections (the memory reducer's at idle among them) shrink and
//   compact the heap rather than leave it sized for throughput. Without it an
//   idle join's old space committed up to 5 MB more than it used before the
//   next full collection, which made the heaviest of 10 volunteers 88–95 MB
//   against a 79–86 MB mean; with it, 12 volunteers interleaved with and
//   without, the heaviest was 84 MB against 95 (docs/node.md).
export const VOLUNTEER_NODE_ENV: Readonly<Record<string, string>> = Object.freeze({ MALLOC_ARENA_MAX: '2' });
export const VOLUNTEER_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=2', '--optimize-for-size']);

/** The executable's first line, from the two above. */
export function volunteerShebang(): string {
  const env = Object.entries(VOLUNTEER_NODE_ENV).map(([k, v]) => `${k}=${v}`);
  return ['#!/usr/bin/env -S', ...env, 'node', ...VOLUNTEER_NODE_FLAGS].join(' ');
}
