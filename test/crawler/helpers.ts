import { parseTask, type ResultSink, type Task, type TaskResult } from '../../src/crawler/task.js';
import type { Site } from '../../testbed/web/testweb.js';

/** Collects uploaded parts. */
export class CollectSink implements ResultSink {
  readonly parts: TaskResult[] = [];
  async upload(r: TaskResult): Promise<void> {
    this.parts.push(r);
  }
  final(taskId?: string): TaskResult {
    const f = this.parts.filter((p) => p.final && (taskId === undefined || p.taskId === taskId)).at(-1);
    if (!f) throw new Error(`no final part${taskId ? ` for ${taskId}` : ''}`);
    return f;
  }
  pages(taskId?: string): TaskResult['pages'] {
    return this.parts.filter((p) => taskId === undefined || p.taskId === taskId).flatMap((p) => p.pages);
  }
  validators(taskId?: string): TaskResult['validators'] {
    return this.parts.filter((p) => taskId === undefined || p.taskId === taskId).flatMap((p) => p.validators);
  }
  clear(): void {
    this.parts.length = 0;
  }
}

let n = 0;
export function siteTask(site: Site, extra: Record<string, unknown> = {}): Task {
  return parseTask({
    id: `t${++n}`,
    scope: { origin: site.origin },
    seeds: [site.url('/')],
    maxDepth: 10,
    deadline: Date.now() + 120_000,
    delayMs: 0,
    ...extra,
  });
}

/** Path of a URL. */
export const pathOf = (u: string): string => new URL(u).pathname;
