// bench:manager's `--archive full` phase: the storage side of the network
// archive, fed batches as volunteers send them — per task robots.txt and 10
// pages of 20 KB HTML (identity-encoded: the manager's gzip has the most to
// do), each with its request, gzip-compressed as on the wire. The batches are
// built before the clock (volunteers build them); timed: inflating each batch,
// ArchiveService.receive (holder, origin, dates, every block and payload
// digest), and the ArchiveWriter building, gzipping and writing the records
// on its worker thread, two batches at a time as the archive protocol's
// receiver takes them; the file is closed (its CDXJ written) inside the span.
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { join } from 'node:path';
import type { Manager } from '../src/manager/manager.js';
import { ArchiveService } from '../src/manager/services/archive.js';
import { ArchiveWriter } from '../src/manager/warc.js';
import { encodeUploadBatch } from '../src/crawler/warc/upload-batch.js';
import type { ArchiveEntry } from '../src/crawler/warc/record.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
const b = (s: string) => Buffer.from(s, 'latin1');

export interface ArchiveBenchResult {
  archivePages: number;
  archivePagesPerSec: number;
  archiveMbPerSec: number;
  /** CPU µs per page, the whole process (all threads: the WARC worker and zlib's pool too). */
  archiveCpuUsPerPage: number;
  archiveWriterStartMs: number;
}

function entriesFor(origin: string, date: number, html: (j: number) => Buffer): ArchiveEntry[] {
  const host = new URL(origin).host;
  const ex = (path: string, body: Buffer, type: string) => ({
    url: origin + path,
    date,
    request: b(`GET ${path} HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\nuser-agent: volcrawl/0.1\r\naccept-encoding: gzip, deflate, br\r\n\r\n`),
    status: 200,
    statusText: 'OK',
    headers: [b('Content-Type'), b(type), b('Content-Length'), b(String(body.length)), b('ETag'), b(`"${path.length}-${body.length}"`), b('Date'), b('Thu, 01 Jan 2026 00:00:00 GMT')],
    body,
    truncated: false,
  });
  const out: ArchiveEntry[] = [{ kind: 'response', exchange: ex('/robots.txt', b('User-agent: *\nDisallow: /private/\n'), 'text/plain') }];
  for (let j = 0; j < 10; j++) out.push({ kind: 'response', exchange: ex(`/p/${j}.html`, html(j), 'text/html; charset=utf-8') });
  return out;
}

/** Runs the phase for `budgetMs` over tasks whose uploads the manager applied from `holder`. */
/** What the ingest phases keep of an issued task (services/tasks.ts IssuedTask). */
export interface SampledTask {
  task: { id: string; scope: { origin: string; pathPrefixes: string[] } };
  channel: { host: string };
}

export async function benchArchiveIngest(m: Manager, tasks: SampledTask[], holder: string, dir: string, text: (k: number) => string, now: () => number, budgetMs: number): Promise<ArchiveBenchResult> {
  const pool = tasks.slice(0, 32);
  if (pool.length === 0) throw new Error('no tasks to archive for');
  const html = (j: number) => Buffer.from(`<!DOCTYPE html><html><head><title>page ${j}</title></head><body><p>${text(j).slice(0, 19_900)}</p></body></html>`, 'utf8');
  const prepared = await Promise.all(
    pool.map(async (it) => {
      const enc = encodeUploadBatch(entriesFor(it.task.scope.origin, now(), html));
      return { orderId: it.task.id, entries: enc.entries, compressed: await gzipAsync(enc.raw, { level: 1 }) };
    }),
  );
  const t0 = performance.now();
  const writer = new ArchiveWriter(join(dir, 'warc'), undefined, now());
  await writer.ready();
  const archiveWriterStartMs = performance.now() - t0;
  const service = new ArchiveService(m.core, m.tasks, writer);
  let batch = 0;
  let pages = 0;
  let bytes = 0;
  const c0 = process.cpuUsage();
  const ts = performance.now();
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (performance.now() - ts < budgetMs) {
        const n = batch++;
        const p = prepared[n % prepared.length]!;
        const raw = await gunzipAsync(p.compressed);
        await service.receive({ orderId: p.orderId, batch: n, entries: p.entries }, raw, holder);
        pages += 10;
        bytes += raw.byteLength;
      }
    }),
  );
  await writer.close();
  const seconds = (performance.now() - ts) / 1000;
  const cpu = process.cpuUsage(c0);
  return {
    archivePages: pages,
    archivePagesPerSec: Math.round(pages / seconds),
    archiveMbPerSec: +(bytes / 1e6 / seconds).toFixed(1),
    archiveCpuUsPerPage: Math.round((cpu.user + cpu.system) / pages),
    archiveWriterStartMs: Math.round(archiveWriterStartMs),
  };
}
