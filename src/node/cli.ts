#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=2
// `volunteer-crawler`: the program a volunteer runs. A small entry: the Node 20
// polyfill first, then (on Node ≥ 22.1) V8's on-disk compile cache, which
// must be on before the program's modules are compiled — so they are loaded
// after it, dynamically (commands.ts).
import '../polyfill.js';
import * as nodeModule from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { VOLUNTEER_V8_RUNTIME_FLAGS } from './runtime-flags.js';

// The first line gives Node the volunteer's runtime settings (glibc's arenas,
// V8's young generation: runtime-flags.ts says why); npm's Windows shim reads
// them from it too. Started another way (`node …/volunteer-crawler.js join`),
// `join` still caps the young generation here, before the bundle loads — a
// weaker cap: V8 applies it only from its next full collection.
// V8's heap kept tight while it is small (VOLUNTEER_V8_RUNTIME_FLAGS: set here on purpose, not on the first line).
if (process.argv[2] === 'join') for (const flag of ['--max-semi-space-size=2', ...VOLUNTEER_V8_RUNTIME_FLAGS]) setFlagsFromString(flag);

// Not in Node 20's typings; a no-op where it is missing or disabled (NODE_DISABLE_COMPILE_CACHE).
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./commands.js');
