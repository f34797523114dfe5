#!/usr/bin/env node
// `dht-manager`: the one service an operator runs. Each verb lives in its own
// module and registers itself here.
// First: libp2p 3 needs Promise.withResolvers before any of it loads (Node 20).
import '../polyfill.js';
import { createProgram, runProgram } from '../cli.js';
import { registerChannels } from './channels-cmd.js';
import { registerServe } from './serve.js';
import { registerVolunteers } from './volunteers-cmd.js';

const program = createProgram(
  'dht-manager',
  'volcrawl manager: channel database, adaptive recrawl scheduling and storage',
);
registerServe(program);
registerChannels(program);
registerVolunteers(program);

await runProgram(program);
