#!/usr/bin/env node
// Runs a TypeScript entry point without a build step: the polyfill first, then
// tsx's loader, then the module. Used by the three executables and `npm run`.
import { pathToFileURL } from 'node:url';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export async function runTs(entry) {
  register();
  await import(pathToFileURL(resolve(root, 'src/polyfill.ts')).href);
  await import(pathToFileURL(resolve(root, entry)).href);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [entry, ...rest] = process.argv.slice(2);
  if (!entry) {
    console.error('usage: run-ts.js <file.ts> [args...]');
    process.exit(2);
  }
  process.argv = [process.argv[0], resolve(entry), ...rest];
  await runTs(resolve(process.cwd(), entry));
}
