// A task runner that pretends to crawl: each task "runs" for `durationMs` (or
// until drained when `hold` is set) and then uploads one final result. It has
// the TaskManager's capacity semantics (threads + queue) and drain contract.
import type { ResultSink, Task, TaskLoad, TaskResult } from '../../src/crawler/task.js';
import type { TaskRunner } from '../../src/node/node.js';
import { emptyResult } from '../../src/crawler/thread.js';

export interface FakeRunnerOptions {
  threads?: number;
  queue?: number;
  durationMs?: number;
  /** Never finish on their own (for drain/migration and crash tests). */
  hold?: boolean;
  /** Unlimited capacity (benchmark). */
  unlimited?: boolean;
}

export function fakeResult(task: Task, startedAt: number): TaskResult {
  const result = emptyResult(task, 'completed', startedAt, Date.now());
  return {
    ...result,
    stats: { ...result.stats, pagesFetched: 1, pagesUnchanged: 1, requests: 1, bytes: 1000, downloadMs: 1, rttMs: 12, urlsDiscovered: 1 },
  };
}

export class FakeRunner implements TaskRunner {
  readonly running = new Map<string, { task: Task; timer?: ReturnType<typeof setTimeout> }>();
  readonly queued: Task[] = [];
  readonly submitted: string[] = [];
  readonly completed: string[] = [];
  private closed = false;

  constructor(
    private readonly sink: ResultSink,
    private readonly o: FakeRunnerOptions = {},
  ) {}

  private get threads(): number {
    return this.o.threads ?? 2;
  }

  submit(task: Task): 'accepted' | 'full' {
    if (this.closed) return 'full';
    if (!this.o.unlimited && this.running.size + this.queued.length >= this.threads + (this.o.queue ?? 2)) return 'full';
    this.submitted.push(task.id);
    if (this.o.unlimited) return 'accepted';
    this.queued.push(task);
    this.pump();
    return 'accepted';
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.threads && this.queued.length > 0) {
      const task = this.queued.shift()!;
      const startedAt = Date.now();
      const entry: { task: Task; timer?: ReturnType<typeof setTimeout> } = { task };
      this.running.set(task.id, entry);
      if (this.o.hold) continue;
      entry.timer = setTimeout(() => {
        this.running.delete(task.id);
        this.completed.push(task.id);
        void this.sink.upload(fakeResult(task, startedAt)).catch(() => undefined);
        this.pump();
      }, this.o.durationMs ?? 100);
    }
  }

  load(): TaskLoad {
    if (this.o.unlimited) return { running: 0, queued: 0, free: 1_000_000 };
    return { running: this.running.size, queued: this.queued.length, free: Math.max(0, this.threads + (this.o.queue ?? 2) - this.running.size - this.queued.length) };
  }

  async drain(): Promise<Task[]> {
    this.closed = true;
    const out: Task[] = [];
    for (const e of this.running.values()) {
      if (e.timer !== undefined) clearTimeout(e.timer);
      out.push(e.task);
    }
    this.running.clear();
    out.push(...this.queued.splice(0));
    return out;
  }

  async close(): Promise<void> {
    await this.drain();
  }
}
