// The task manager (paper §2.2): a bounded queue in front of at most N task
// threads. A finished thread takes the next task; a task that waits past its
// deadline is cancelled and reported; one token bucket caps the bandwidth of
// all threads; the process asks for low OS priority; load() feeds routing;
// drain() hands queued and running tasks back for migration.
import { constants as osConstants, setPriority } from 'node:os';
import { TokenBucket } from './bandwidth.js';
import { parseTask, type ResultSink, type Task, type TaskLoad, type TaskManagerOptions, type TaskResult } from './task.js';
import { emptyResult, runTask, type ThreadOptions, type ThreadOutcome } from './thread.js';

export type { ResultSink, TaskLoad, TaskManagerOptions } from './task.js';

export interface TaskManagerExtraOptions {
  /** Passed to every task thread (limits, tmpDir, user agent, hooks). */
  thread?: Omit<ThreadOptions, 'signal' | 'bandwidth' | 'allowPrivate'>;
  /** Lower the process priority (default true; best effort). */
  lowPriority?: boolean;
  /** Wall clock (epoch ms) for deadlines. */
  now?: () => number;
  /** How often queued tasks are checked against their deadlines (ms, default 1000). */
  sweepMs?: number;
  /** Called when a task ends (completed, cancelled, failed or handed over). */
  onTaskEnd?: (task: Task, outcome: ThreadOutcome | { status: 'cancelled'; reason: string }) => void;
  /** Called when the sink or a thread fails unexpectedly. */
  onError?: (err: unknown, task: Task) => void;
}

interface Running {
  task: Task;
  abort: AbortController;
  /** The crawl is over and its result is being uploaded: not handed over. */
  uploading: boolean;
  done: Promise<void>;
}

export class TaskManager {
  private threadCount: number;
  private queueMax: number;
  private readonly queue: Task[] = [];
  private readonly running = new Map<string, Running>();
  private readonly sink: ResultSink;
  private bucket: TokenBucket | undefined;
  private readonly allowPrivate: boolean;
  private readonly now: () => number;
  private readonly sweepTimer: NodeJS.Timeout;
  private accepting = true;
  private idleWaiters: (() => void)[] = [];
  /** Highest simultaneous running/queued counts seen (for tests and monitoring). */
  readonly peak = { running: 0, queued: 0 };

  constructor(private readonly opts: TaskManagerOptions & TaskManagerExtraOptions) {
    this.threadCount = positiveInt(opts.threads ?? 5, 'threads');
    this.queueMax = nonNegativeInt(opts.queue ?? 5, 'queue');
    this.sink = opts.sink;
    this.allowPrivate = opts.allowPrivate ?? false;
    this.now = opts.now ?? Date.now;
    this.bucket = opts.maxBandwidth !== undefined ? new TokenBucket(opts.maxBandwidth) : undefined;
    if (opts.lowPriority !== false) {
      try {
        setPriority(osConstants.priority.PRIORITY_LOW);
      } catch {
        // best effort: not permitted or not supported
      }
    }
    this.sweepTimer = setInterval(() => this.sweep(), opts.sweepMs ?? 1000);
    this.sweepTimer.unref();
  }

  get threads(): number {
    return this.threadCount;
  }

  get queueLimit(): number {
    return this.queueMax;
  }

  /** The owner changed the thread count: more start queued tasks at once; fewer let running tasks finish and start no new ones until below. */
  setThreads(n: number): void {
    this.threadCount = positiveInt(n, 'threads');
    this.next();
  }

  /** The owner changed the queue length: tasks already queued beyond it stay and run. */
  setQueue(n: number): void {
    this.queueMax = nonNegativeInt(n, 'queue');
  }

  /** The owner changed the bandwidth cap (null = none): running threads follow a changed rate at once; a new or removed cap applies to tasks started from now. */
  setBandwidth(bytesPerSecond: number | null): void {
    if (bytesPerSecond === null) this.bucket = undefined;
    else if (this.bucket) this.bucket.setRate(bytesPerSecond);
    else this.bucket = new TokenBucket(bytesPerSecond);
  }

  /**
   * Stops taking tasks for a while (the owner's pause): like drain(), the
   * running tasks are aborted and returned with the queued ones, to be handed
   * on; unlike it, resume() takes tasks again.
   */
  pause(): Promise<Task[]> {
    return this.drain();
  }

  /** Takes tasks again after pause(). */
  resume(): void {
    this.accepting = true;
  }

  /**
   * Offers a task. It is validated again here (an invalid task throws
   * TaskValidationError and is never run); 'full' when every thread is busy
   * and the queue is full, or the manager is draining.
   */
  submit(task: Task): 'accepted' | 'full' {
    const t = parseTask(task);
    if (!this.accepting) return 'full';
    if (this.running.has(t.id) || this.queue.some((q) => q.id === t.id)) return 'accepted'; // duplicate delivery
    if (this.running.size < this.threadCount) {
      this.start(t);
      return 'accepted';
    }
    if (this.queue.length >= this.queueMax) return 'full';
    this.queue.push(t);
    this.peak.queued = Math.max(this.peak.queued, this.queue.length);
    return 'accepted';
  }

  load(): TaskLoad {
    const running = this.running.size;
    const queued = this.queue.length;
    const free = this.accepting ? this.threadCount - running + (this.queueMax - queued) : 0;
    return { running, queued, free: Math.max(0, free), threads: this.accepting ? this.threadCount : running };
  }

  /** Resolves when nothing is running or queued. */
  idle(): Promise<void> {
    if (this.running.size === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Graceful shutdown: stop accepting, abort running tasks, return running + queued tasks for migration. */
  async drain(): Promise<Task[]> {
    this.accepting = false;
    const queued = this.queue.splice(0);
    const running = [...this.running.values()];
    for (const r of running) if (!r.uploading) r.abort.abort();
    await Promise.all(running.map((r) => r.done));
    // A task whose crawl had finished was uploaded, not handed over.
    return [...running.filter((r) => !r.uploading).map((r) => r.task), ...queued];
  }

  /** Stops everything: like drain(), but the tasks are dropped. */
  async close(): Promise<void> {
    await this.drain();
    clearInterval(this.sweepTimer);
  }

  private start(task: Task): void {
    const abort = new AbortController();
    const entry: Running = { task, abort, uploading: false, done: Promise.resolve() };
    this.running.set(task.id, entry);
    this.peak.running = Math.max(this.peak.running, this.running.size);
    const onUploadStart = () => {
      entry.uploading = true;
    };
    // A task that asks for its exchanges gets the sink's archive for it (a volunteer's upload to the manager).
    const archive = task.archive === 'full' ? this.sink.archiveFor?.(task) : undefined;
    const thread = { ...this.opts.thread, ...(archive !== undefined ? { archive } : {}) };
    entry.done = runTask(task, this.sink, { ...thread, onUploadStart, signal: abort.signal, allowPrivate: this.allowPrivate, ...(this.bucket ? { bandwidth: this.bucket } : {}) })
      .then((outcome) => this.opts.onTaskEnd?.(task, outcome))
      .catch((err: unknown) => this.opts.onError?.(err, task))
      .finally(() => {
        this.running.delete(task.id);
        this.next();
      });
  }

  /** A finished thread takes the next task that is not overdue. */
  private next(): void {
    while (this.accepting && this.running.size < this.threadCount && this.queue.length > 0) {
      const t = this.queue.shift() as Task;
      if (t.deadline <= this.now()) this.cancel(t);
      else this.start(t);
    }
    if (this.running.size === 0 && this.queue.length === 0) {
      const w = this.idleWaiters.splice(0);
      for (const f of w) f();
    }
  }

  private sweep(): void {
    const now = this.now();
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const t = this.queue[i] as Task;
      if (t.deadline <= now) {
        this.queue.splice(i, 1);
        this.cancel(t);
      }
    }
    this.next();
  }

  /** Reports an overdue task as cancelled. */
  private cancel(task: Task): void {
    const now = this.now();
    const reason = 'deadline passed while queued';
    const result: TaskResult = { ...emptyResult(task, 'cancelled', now, now), reason };
    this.opts.onTaskEnd?.(task, { status: 'cancelled', reason });
    this.sink.upload(result).catch((err: unknown) => this.opts.onError?.(err, task));
  }
}

function positiveInt(n: number, name: string): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${n}`);
  return n;
}
function nonNegativeInt(n: number, name: string): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
  return n;
}
