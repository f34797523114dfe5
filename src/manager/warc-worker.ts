// The WARC worker thread (started by warc.ts's WarcExporter): record building,
// SHA-256, gzip and file writes for the pages the main thread posts, in order.
import { parentPort, workerData } from 'node:worker_threads';
import { WarcFile, type WarcPage } from './warc-file.js';

export interface WarcWorkerData {
  dir: string;
  maxBytes: number;
  now: number;
}
export type WarcRequest = { type: 'append'; id: number; pages: WarcPage[] } | { type: 'close' };
export type WarcReply = { id: number; error?: string };

const port = parentPort!;
const { dir, maxBytes, now } = workerData as WarcWorkerData;
const file = new WarcFile(dir, maxBytes, now);
let chain: Promise<void> = Promise.resolve();

port.on('message', (msg: WarcRequest) => {
  if (msg.type === 'append') {
    chain = chain.then(() =>
      file.append(msg.pages).then(
        () => port.postMessage({ id: msg.id } satisfies WarcReply),
        (err: unknown) => port.postMessage({ id: msg.id, error: String(err) } satisfies WarcReply),
      ),
    );
  } else {
    // Everything posted before 'close' is written; then the thread ends on its own.
    chain = chain.then(() => {
      file.close();
      port.close();
    });
  }
});
