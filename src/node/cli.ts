#!/usr/bin/env node
// `volunteer-crawler`: the program a volunteer runs. Each verb lives in its own
// module and registers itself here.
// First: libp2p 3 needs Promise.withResolvers before any of it loads (Node 20).
import '../polyfill.js';
import { createProgram, runProgram } from '../cli.js';
import { registerJoin } from './join.js';

const program = createProgram(
  'volunteer-crawler',
  'volcrawl volunteer: lend this PC to a peer-to-peer web crawl, politely and at low priority',
);

registerJoin(program);
(await import('./crawl-command.js')).registerCrawl(program);
(await import('./owner-cli.js')).registerOwnerVerbs(program);

await runProgram(program);
