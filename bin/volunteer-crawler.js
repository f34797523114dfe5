#!/usr/bin/env node
import { runTs } from './run-ts.js';

await runTs('src/node/cli.ts');
