// vitest globalSetup: tests that start processes run the compiled build (bin/ →
// dist/, as the installed package does), so rebuild it first when a source is
// newer than the last build.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const build = fileURLToPath(new URL('../bin/build.js', import.meta.url));
  const r = spawnSync(process.execPath, [build, '--if-stale'], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`npm run build failed (exit ${r.status})`);
}
