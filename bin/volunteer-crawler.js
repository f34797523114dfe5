#!/usr/bin/env node
// `volunteer-crawler` from the compiled build (see built.js).
import { runBuilt } from './built.js';

await runBuilt('bin/volunteer-crawler.js');
