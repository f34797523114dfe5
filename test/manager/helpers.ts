// Shared helpers for the manager tests: temp data dirs, a settable clock, and
// well-formed task results as a crawler would upload them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha1_32 } from '../../src/crawler/hash.js';
import type { Task, TaskResult } from '../../src/crawler/task.js';
import { Manager, type ManagerOptions } from '../../src/manager/manager.js';

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'volcrawl-mgr-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export class Clock {
  constructor(public t = Date.UTC(2026, 0, 1)) {}
  now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

export async function openManager(dir: string, clock: Clock, extra: Partial<ManagerOptions> = {}): Promise<Manager> {
  return Manager.open({ dataDir: dir, clock: clock.now, ...extra });
}

export interface FakePage {
  path: string;
  body: string;
}

/** One part of a result for `task` with the given pages (all changed or not, by digest). */
export function resultFor(task: Task, pages: FakePage[], opts: { part?: number; final?: boolean; status?: TaskResult['status']; interSite?: string[]; at?: number } = {}): TaskResult {
  const at = opts.at ?? task.deadline - 1000;
  const origin = task.scope.origin;
  const known = new Set(task.pageDigests);
  const validators = pages.map((p) => ({ url: origin + p.path, digest: sha1_32(p.body), depth: 1 }));
  const changed = pages.filter((p) => !known.has(sha1_32(p.body)));
  return {
    taskId: task.id,
    channel: task.scope,
    part: opts.part ?? 0,
    final: opts.final ?? true,
    status: opts.status ?? 'completed',
    startedAt: at - 500,
    finishedAt: at,
    pages: changed.map((p) => ({
      url: origin + p.path,
      status: 200,
      depth: 1,
      fetchedAt: at,
      contentType: 'text/html',
      bytes: p.body.length,
      digest: sha1_32(p.body),
      title: `title ${p.path}`,
      text: p.body,
    })),
    validators,
    newDigests: changed.map((p) => sha1_32(p.body)),
    interSiteUrls: opts.interSite ?? [],
    outcomes: { changed: changed.length, unchanged: pages.length - changed.length },
    errors: [],
    stats: {
      pagesFetched: pages.length,
      pagesChanged: changed.length,
      pagesUnchanged: pages.length - changed.length,
      pagesNotModified: 0,
      pagesFailed: 0,
      requests: pages.length + 1,
      bytes: pages.reduce((s, p) => s + p.body.length, 0),
      downloadMs: 1500,
      rttMs: 20,
      crawlDelayMs: 0,
      urlsDiscovered: pages.length,
      urlsSpilled: 0,
    },
  };
}

export function upload(task: Task, result: TaskResult, extra: { hostRttMs?: number | null; coord?: number[] } = {}) {
  return {
    orderId: task.id,
    crawler: 'x',
    host: new URL(task.scope.origin).hostname,
    hostRttMs: extra.hostRttMs ?? null,
    ...(extra.coord !== undefined ? { crawlerCoord: { vec: extra.coord, height: 1, error: 0.2 } } : {}),
    result,
  };
}
