// A task runner that loads the real one on the first task. The crawler (HTTP
// client, HTML parser, robots.txt, WARC) is most of a volunteer's code and
// memory, and an idle volunteer needs none of it: until a task arrives this
// stands in, with the same capacity, so routers see the same free slots.
// Tasks accepted while the crawler loads wait here and go to it once it is up.
import type { Task, TaskLoad } from '../crawler/task.js';
import type { TaskRunner } from './node-types.js';

export interface LazyRunnerOptions {
  /** Threads + queue of the runner to come (what `load()` reports meanwhile). */
  capacity: number;
  /** Threads of the runner to come (the `threads` `load()` reports meanwhile). */
  threads: number;
  /** Creates the real runner (typically a dynamic import and a constructor). */
  create: () => Promise<TaskRunner>;
  /** Told when loading fails: the tasks waiting here are dropped (never
   * acknowledged, so the manager re-issues them) and later ones refused. */
  onLoadError?: (err: unknown, dropped: Task[]) => void;
}

export class LazyRunner implements TaskRunner {
  private inner: TaskRunner | undefined;
  private loading: Promise<TaskRunner | undefined> | undefined;
  private readonly waiting: Task[] = [];
  private closed = false;
  private failed = false;
  private paused = false;
  private capacity: number;
  private threads: number;

  constructor(private readonly o: LazyRunnerOptions) {
    this.capacity = o.capacity;
    this.threads = o.threads;
  }

  /** The owner changed threads or queue: what `load()` reports until the crawler is loaded (it has its own setters). */
  setCapacity(n: number, threads: number): void {
    this.capacity = n;
    this.threads = threads;
  }

  /** Whether the real runner has been loaded. */
  get loaded(): boolean {
    return this.inner !== undefined;
  }

  submit(task: Task): 'accepted' | 'full' {
    if (this.inner !== undefined) return this.inner.submit(task);
    if (this.closed || this.failed || this.paused) return 'full';
    if (this.waiting.some((t) => t.id === task.id)) return 'accepted'; // duplicate delivery
    if (this.waiting.length >= this.capacity) return 'full';
    this.waiting.push(task);
    void this.ensureLoaded();
    return 'accepted';
  }

  load(): TaskLoad {
    if (this.inner !== undefined) return this.inner.load();
    const taking = !(this.closed || this.failed || this.paused);
    const free = taking ? this.capacity - this.waiting.length : 0;
    return { running: 0, queued: this.waiting.length, free: Math.max(0, free), threads: taking ? this.threads : 0 };
  }

  private ensureLoaded(): Promise<TaskRunner | undefined> {
    this.loading ??= this.o.create().then(
      (runner) => {
        this.inner = runner;
        // The runner has the capacity they were accepted against (a refusal
        // or a throw loses the task here; the manager re-issues it).
        for (const t of this.waiting.splice(0)) {
          try {
            runner.submit(t);
          } catch {
            /* validated by the task protocol already */
          }
        }
        return runner;
      },
      (err: unknown) => {
        this.failed = true;
        this.o.onLoadError?.(err, this.waiting.splice(0));
        return undefined;
      },
    );
    return this.loading;
  }

  /** Takes no tasks until resume(); returns the running and queued ones, to be handed on. */
  async pause(): Promise<Task[]> {
    this.paused = true;
    const inner = this.inner ?? (this.loading !== undefined ? await this.loading : undefined);
    if (inner !== undefined) return (await inner.pause?.()) ?? [];
    return this.waiting.splice(0);
  }

  resume(): void {
    this.paused = false;
    this.inner?.resume?.();
  }

  async drain(): Promise<Task[]> {
    this.closed = true;
    const inner = this.inner ?? (this.loading !== undefined ? await this.loading : undefined);
    if (inner !== undefined) return inner.drain();
    return this.waiting.splice(0);
  }

  async close(): Promise<void> {
    this.closed = true;
    const inner = this.inner ?? (this.loading !== undefined ? await this.loading : undefined);
    this.waiting.length = 0;
    await inner?.close();
  }
}
