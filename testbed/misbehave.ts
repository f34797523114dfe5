// A misbehaving volunteer for the integrity benchmark and tests, loaded into the
// real `volunteer-crawler join` through VOLCRAWL_TEST_PLUGIN (src/node/test-plugin.ts).
// VOLCRAWL_MISBEHAVE says how:
//   forge-text  every page uploaded with text gets a forged text (SEO spam with
//               FORGED_MARKER) under its true digest and title
//   empty       every task is "completed" with no page at all (acknowledged, never crawled)
//   drop        every task is accepted and crawled, and its result never uploaded
//               (acknowledged, then dropped: the manager sees it lost at its deadline)
//   fake-coord  crawls honestly but claims a coordinate VOLCRAWL_FAKE_OFFSET_MS
//               (default 300) away from its own on the first axis, with a
//               confident error, in probe and witness replies and in the cells it
//               announces (to attract the tasks of hosts it is not near)
// VOLCRAWL_MISBEHAVE_SHARE (0..1, default 1): the share of tasks it misbehaves on
// (chosen by a hash of the task id, so a retried upload is rewritten the same way).
import { createHash, randomBytes } from 'node:crypto';
import type { Coordinate } from '../src/coords/index.js';
import type { ResultSink, TaskResult } from '../src/crawler/task.js';

export const FORGED_MARKER = 'cheap-pills-forged-by-volcrawl-test';
export const MISBEHAVIOURS = ['forge-text', 'empty', 'drop', 'fake-coord'] as const;
export type Misbehaviour = (typeof MISBEHAVIOURS)[number];

function misbehavesOn(taskId: string, share: number): boolean {
  if (share >= 1) return true;
  const h = createHash('sha1').update(taskId).digest().readUInt32BE(0);
  return h / 2 ** 32 < share;
}

/** Each forger pushes its own spam (independent forgers; colluders would share it). */
const SPAM = `buy now ${randomBytes(5).toString('hex')}`;

export function rewrite(r: TaskResult, mode: Misbehaviour): TaskResult {
  if (mode === 'forge-text') {
    return { ...r, pages: r.pages.map((p) => (p.noindex === true ? p : { ...p, text: `${FORGED_MARKER} ${SPAM} ${FORGED_MARKER} ${p.text.slice(0, 40)}` })) };
  }
  return { ...r, status: r.final ? 'completed' : r.status, pages: [], validators: [], newDigests: [], interSiteUrls: [] };
}

export function wrapSink(sink: ResultSink, env: NodeJS.ProcessEnv): ResultSink {
  const mode = env.VOLCRAWL_MISBEHAVE as Misbehaviour | undefined;
  if (mode === undefined || !MISBEHAVIOURS.includes(mode)) throw new Error(`VOLCRAWL_MISBEHAVE must be one of ${MISBEHAVIOURS.join(', ')}`);
  const share = Number(env.VOLCRAWL_MISBEHAVE_SHARE ?? 1);
  if (mode === 'fake-coord') return sink;
  if (mode === 'drop') return { ...sink, upload: (r) => (misbehavesOn(r.taskId, share) ? Promise.resolve() : sink.upload(r)) };
  return { ...sink, upload: (r) => sink.upload(misbehavesOn(r.taskId, share) ? rewrite(r, mode) : r) };
}

/** The coordinate a fake-coord volunteer claims (null in the other modes: it claims the truth). */
export function claimCoordinate(c: Coordinate, env: NodeJS.ProcessEnv): Coordinate | null {
  if (env.VOLCRAWL_MISBEHAVE !== 'fake-coord') return null;
  const offset = Number(env.VOLCRAWL_FAKE_OFFSET_MS ?? 300);
  return { vec: Float64Array.from(c.vec, (x, i) => (i === 0 ? x + offset : x)), height: c.height, error: Math.min(c.error, 0.2) };
}
