#!/usr/bin/env node
// `volunteer-crawler`: the program a volunteer runs. A small entry: the Node 20
// polyfill first, then (on Node ≥ 22.1) V8's on-disk compile cache, which
// must be on before the program's modules are compiled — so they are loaded
// after it, dynamically (commands.ts).
import '../polyfill.js';
import * as nodeModule from 'node:module';
import { setFlagsFromString } from 'node:v8';

// `join` caps V8's young generation (join.ts, JOIN_SEMI_SPACE_MB) — here,
// before the bundle loads: set later, the cap only applies from V8's next full
// collection, and an idle node may not have one for a long time, so loading
// had grown the semi-spaces to 16 MB that stayed resident (seen in 1 of 2
// idle joins: new space 16 MB against 2 MB, RSS 111 against 93 MB).
if (process.argv[2] === 'join') setFlagsFromString('--max-semi-space-size=2');

// Not in Node 20's typings; a no-op where it is missing or disabled (NODE_DISABLE_COMPILE_CACHE).
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./commands.js');
