// A seam for test harnesses, never for users: when VOLCRAWL_TEST_PLUGIN names
// a module, `volunteer-crawler join` loads it and passes its result sink
// through the module's `wrapSink` before the crawler uses it, and, when the
// module exports `claimCoordinate`, claims the coordinate it returns instead of
// its own (in probe replies, witness replies and cell announcements), and when
// it exports `refusePushes = true`, resets every task order pushed to it (as a
// relay that drops the circuit would: the NAT tests' failing pushes). The
// integrity benchmark and tests use it to run a misbehaving volunteer as the
// real CLI (testbed/misbehave.ts): the same binary, protocols and manager, with
// uploads rewritten on the way out or a false position. Unset by default;
// nothing in src/ ships a plugin.
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import type { Coordinate, VivaldiNode } from '../coords/index.js';
import type { ResultSink } from '../crawler/task.js';

export const TEST_PLUGIN_ENV = 'VOLCRAWL_TEST_PLUGIN';

export type SinkWrapper = (sink: ResultSink) => ResultSink;

export interface TestPlugin {
  wrapSink: SinkWrapper;
  /** The coordinate to claim, from the true one (absent: the truth). */
  claim?: (c: Coordinate) => Coordinate;
  /** Reset every pushed task order (orders it pulls still arrive). */
  refusePushes?: boolean;
}

type PluginModule = {
  wrapSink?: (sink: ResultSink, env: NodeJS.ProcessEnv) => ResultSink;
  claimCoordinate?: (c: Coordinate, env: NodeJS.ProcessEnv) => Coordinate | null;
  refusePushes?: boolean;
};

/** The plugin, or null when none is configured. Throws when the variable is set but unusable. */
export async function loadTestPlugin(log: Logger, env: NodeJS.ProcessEnv = process.env): Promise<TestPlugin | null> {
  const path = env[TEST_PLUGIN_ENV];
  if (path === undefined || path === '') return null;
  if (!isAbsolute(path)) throw new Error(`${TEST_PLUGIN_ENV} must be an absolute path to a module`);
  const mod = (await import(pathToFileURL(path).href)) as PluginModule;
  if (typeof mod.wrapSink !== 'function') throw new Error(`${TEST_PLUGIN_ENV}: ${path} exports no wrapSink function`);
  log.warn({ plugin: path }, 'TEST PLUGIN LOADED: this volunteer rewrites its uploads or its coordinate (test harnesses only)');
  const wrap = mod.wrapSink;
  const claimFn = mod.claimCoordinate;
  // A plugin that fakes nothing in this mode returns null for the claim: no hook.
  const probe = typeof claimFn === 'function' ? claimFn({ vec: Float64Array.from([0, 0]), height: 0, error: 1 }, env) : null;
  return {
    wrapSink: (sink) => wrap(sink, env),
    ...(claimFn !== undefined && probe !== null ? { claim: (c: Coordinate) => claimFn(c, env) ?? c } : {}),
    ...(mod.refusePushes === true ? { refusePushes: true } : {}),
  };
}

/** A view of `real` whose `coord` is the claim made from its true coordinate;
 * everything else (Vivaldi's updates) works on the truth. */
export function claimingVivaldi(real: VivaldiNode, claim: (c: Coordinate) => Coordinate): VivaldiNode {
  return new Proxy(real, {
    get(target, prop) {
      if (prop === 'coord') return claim(target.coord);
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
