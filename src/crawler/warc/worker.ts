// The WARC worker thread (started by writer.ts's WarcWriter): builds, digests,
// gzips and writes the records of the entries the main thread posts, in order.
import { parentPort, workerData } from 'node:worker_threads';
import { WarcFileSet, type ClosedFile, type RecordCounts, type WarcFileSetOptions } from './files.js';
import { entryRecords, unpackEntries, type PackedBatch, type WarcRecord } from './record.js';

export type WarcWorkerData = WarcFileSetOptions;
export type WarcRequest = { type: 'append'; id: number; batch: PackedBatch } | { type: 'close' };
export type WarcReply = { type: 'ready' } | { type: 'done'; id: number; error?: string } | { type: 'closed'; files: ClosedFile[]; counts: RecordCounts; error?: string };

const port = parentPort!;
const files = new WarcFileSet(workerData as WarcWorkerData);

// Loaded (modules and all): say so, then take messages one at a time, start to end (everything here is synchronous).
port.postMessage({ type: 'ready' } satisfies WarcReply);
port.on('message', (msg: WarcRequest) => {
  if (msg.type === 'append') {
    try {
      const records: WarcRecord[] = [];
      for (const e of unpackEntries(msg.batch)) for (const r of entryRecords(e)) records.push(r);
      files.append(records);
      port.postMessage({ type: 'done', id: msg.id } satisfies WarcReply);
    } catch (err) {
      port.postMessage({ type: 'done', id: msg.id, error: String(err) } satisfies WarcReply);
    }
  } else {
    let error: string | undefined;
    try {
      files.close();
    } catch (err) {
      error = String(err);
    }
    port.postMessage({ type: 'closed', files: files.closed, counts: files.counts, ...(error !== undefined ? { error } : {}) } satisfies WarcReply);
    port.close();
  }
});
