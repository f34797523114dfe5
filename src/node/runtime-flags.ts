// How Node runs a volunteer: what the executable's first line sets
// (`#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=2`,
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
// - --optimize-for-size, set from inside the process (cli.ts, before the
//   bundle loads), not on the first line: V8 then treats the heap as
//   memory-constrained (a small growth factor after each full collection;
//   collections that shrink and compact), which keeps an idle join's heap
//   from growing ahead of its next full collection — the heaviest of 10
//   volunteers had had old space 22 MB committed for 17 used. Given on the
//   first line it also changes how V8 sizes the heap at start: the
//   crawler's CPU per page rose 1.25× (8 pairs) and idle CPU with it; set
//   from inside, 1.04× on a first crawl and 1.17× on a recrawl (6 pairs,
//   noisy): docs/node.md, "A heap kept tight".
export const VOLUNTEER_V8_RUNTIME_FLAGS: readonly string[] = Object.freeze(['--optimize-for-size']);
export const VOLUNTEER_NODE_ENV: Readonly<Record<string, string>> = Object.freeze({ MALLOC_ARENA_MAX: '2' });
export const VOLUNTEER_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=2']);

/** The executable's first line, from the two above. */
export function volunteerShebang(): string {
  const env = Object.entries(VOLUNTEER_NODE_ENV).map(([k, v]) => `${k}=${v}`);
  return ['#!/usr/bin/env -S', ...env, 'node', ...VOLUNTEER_NODE_FLAGS].join(' ');
}
