// A misbehaving volunteer for the integrity benchmark and tests, loaded into the
// real `volunteer-crawler join` through VOLCRAWL_TEST_PLUGIN (src/node/test-plugin.ts).
// VOLCRAWL_MISBEHAVE says how:
//   forge-text  every page uploaded with text gets a forged text (SEO spam with
//               FORGED_MARKER) under its true digest and title
//   empty       every task is "completed" with no page at all (acknowledged, never crawled)
// VOLCRAWL_MISBEHAVE_SHARE (0..1, default 1): the share of tasks it misbehaves on
// (chosen by a hash of the task id, so a retried upload is rewritten the same way).
import { createHash, randomBytes } from 'node:crypto';
import type { ResultSink, TaskResult } from '../src/crawler/task.js';

export const FORGED_MARKER = 'cheap-pills-forged-by-volcrawl-test';
export const MISBEHAVIOURS = ['forge-text', 'empty'] as const;
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
  return { upload: (r) => sink.upload(misbehavesOn(r.taskId, share) ? rewrite(r, mode) : r) };
}
