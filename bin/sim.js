#!/usr/bin/env node
// `sim` from the compiled build (see built.js).
import { runBuilt } from './built.js';

await runBuilt('sim/cli.js');
