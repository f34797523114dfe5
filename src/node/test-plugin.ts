// A seam for test harnesses, never for users: when VOLCRAWL_TEST_PLUGIN names
// a module, `volunteer-crawler join` loads it and passes its result sink
// through the module's `wrapSink` before the crawler uses it. The integrity
// benchmark and tests use it to run a misbehaving volunteer as the real CLI
// (testbed/misbehave.ts): the same binary, protocols and manager, with uploads
// rewritten on the way out. Unset by default; nothing in src/ ships a plugin.
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import type { ResultSink } from '../crawler/task.js';

export const TEST_PLUGIN_ENV = 'VOLCRAWL_TEST_PLUGIN';

export type SinkWrapper = (sink: ResultSink) => ResultSink;

/** The plugin's sink wrapper, or null when none is configured. Throws when the variable is set but unusable. */
export async function loadTestPlugin(log: Logger, env: NodeJS.ProcessEnv = process.env): Promise<SinkWrapper | null> {
  const path = env[TEST_PLUGIN_ENV];
  if (path === undefined || path === '') return null;
  if (!isAbsolute(path)) throw new Error(`${TEST_PLUGIN_ENV} must be an absolute path to a module`);
  const mod = (await import(pathToFileURL(path).href)) as { wrapSink?: (sink: ResultSink, env: NodeJS.ProcessEnv) => ResultSink };
  if (typeof mod.wrapSink !== 'function') throw new Error(`${TEST_PLUGIN_ENV}: ${path} exports no wrapSink function`);
  log.warn({ plugin: path }, 'TEST PLUGIN LOADED: this volunteer rewrites its uploads (test harnesses only)');
  const wrap = mod.wrapSink;
  return (sink) => wrap(sink, env);
}
