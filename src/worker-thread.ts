// Starting a worker thread on a module next to the caller's, with or without a
// build step. Without one the sources are TypeScript, and tsx's loader hooks
// (registered on the main thread by bin/run-ts.js, or by vitest) do not reach
// worker threads on Node 20: the worker registers them itself before importing
// the module.
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** The module `name` beside the caller's (its `import.meta.url`), in the caller's own form (.ts or .js). */
export function siblingModule(callerUrl: string, name: string): URL {
  return new URL(`./${name}.${callerUrl.endsWith('.ts') ? 'ts' : 'js'}`, callerUrl);
}

/** A worker running `module` (a .js or .ts file URL). */
export function startModuleWorker(module: URL, options: WorkerOptions = {}): Worker {
  if (!module.pathname.endsWith('.ts')) return new Worker(module, options);
  const api = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const boot = `import(${api}).then((tsx) => { tsx.register(); return import(${JSON.stringify(module.href)}); });`;
  return new Worker(boot, { ...options, eval: true });
}
