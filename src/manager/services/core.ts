// What every service shares: the repositories, the scheduling rules with the
// window aggregates, the tasks in flight, the locks, the counters, the clock and
// the log. Services get this, never each
// other's internals; where one needs another's work it calls its public methods.
//
// Locking: every state change runs under `commit` (one async mutex): the
// in-memory change (aggregates, tasks in flight) and the batch that persists it
// happen together, and the batch is written before the caller is answered. Uploads and operator edits of
// one channel are also serialised per channel (`channel`, taken first), so the
// reads they do outside `commit` see no interleaved change of that channel.
import type { Logger } from 'pino';
import type { Repositories } from '../data/repositories.js';
import type { Counters } from '../domain/records.js';
import type { InFlightSet } from '../domain/in-flight.js';
import type { Scheduler } from '../domain/scheduler.js';

/** A minimal async mutex. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const r = this.tail.then(fn);
    this.tail = r.then(
      () => undefined,
      () => undefined,
    );
    return r;
  }
}

/** One mutex per key (channel), created on demand and dropped when idle. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    const r = prev.then(fn);
    const tail = r.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return r;
  }
}

export interface ServiceCore {
  readonly repos: Repositories;
  readonly sched: Scheduler;
  readonly inflight: InFlightSet;
  readonly commit: Mutex;
  readonly channelLocks: KeyedMutex;
  readonly counters: Counters;
  readonly clock: () => number;
  readonly log: Logger;
}
