#!/usr/bin/env node
// `volunteer-crawler`: the program a volunteer runs. A small entry: the Node 20
// polyfill first, then (on Node ≥ 22.1) V8's on-disk compile cache, which
// must be on before the program's modules are compiled — so they are loaded
// after it, dynamically (commands.ts).
import '../polyfill.js';
import * as nodeModule from 'node:module';

// Not in Node 20's typings; a no-op where it is missing or disabled (NODE_DISABLE_COMPILE_CACHE).
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./commands.js');
