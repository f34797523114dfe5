#!/usr/bin/env node
// `dht-manager` from the compiled build (see built.js).
import { runBuilt } from './built.js';

await runBuilt('src/manager/cli.js');
