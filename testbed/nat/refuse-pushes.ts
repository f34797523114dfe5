// A volunteer whose pushed orders never arrive, loaded into the real
// `volunteer-crawler join` through VOLCRAWL_TEST_PLUGIN (src/node/test-plugin.ts):
// every task order pushed to it is reset unread, as when the relay it holds a
// reservation on drops the circuit. What it pulls still arrives. Used by
// test/nat/push-fail.test.ts (the manager tells it to pull).
import type { ResultSink } from '../../src/crawler/task.js';

export const refusePushes = true;

export function wrapSink(sink: ResultSink): ResultSink {
  return sink;
}
