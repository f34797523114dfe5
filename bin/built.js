// Runs a module of the compiled build (dist/, made by `npm install` or `npm run
// build`): the repository's launchers, used by the demo and the process tests,
// so they run exactly what the installed package runs.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export async function runBuilt(entry) {
  const file = resolve(root, 'dist', entry);
  if (!existsSync(file)) {
    console.error(`volcrawl: ${file} is missing; build it with \`npm run build\` (\`npm install\` does it too)`);
    process.exit(1);
  }
  await import(pathToFileURL(file).href);
}
