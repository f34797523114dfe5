// Where the crawlers' online thread-minutes went (issue 12: what a strategy's
// share "of the bound" is made of). sim/bounds.ts counts every online
// thread-minute as one that could have gone into a completed task; this ledger
// says where each one went instead:
//   completed    busy on tasks that completed (their download times);
//   lost         busy on tasks whose crawler then left (lost without notice, or
//                migrated and restarted elsewhere: the work done is gone either way);
//   in progress  busy on tasks still running at the end of the run;
//   idle, work waiting   idle threads while tasks waited in other crawlers' queues:
//                min(idle threads, waiting tasks), integrated — what placement
//                left unused (a perfect placement would have started them);
//   idle, nothing to do  the rest of the idle time: no task waiting anywhere, so
//                only a larger recrawl budget could have used it.
// The busy parts are summed per task by the engine; the idle parts are integrated
// here, between events, from the counts of online threads, running tasks and live
// tasks, so the five add up to the online thread-minutes independently (the test
// checks it). "Waiting" counts a queued task until its crawler purges it, which
// for a task past its deadline is at that crawler's next start or finish (its
// threads are busy, or the task would have started): a small overcount.

/** The online thread-minutes of a run, by what they did (minutes). */
export interface ThreadUse {
  completed: number;
  lost: number;
  inProgress: number;
  idleWaiting: number;
  idleNothing: number;
}

export class ThreadLedger {
  /** Tasks running on online crawlers' threads. */
  running = 0;
  /** Idle thread-minutes, all, and while tasks waited elsewhere. */
  idleMinutes = 0;
  idleWaitingMinutes = 0;
  private last = 0;

  /** Integrates up to t with the counts that held since the last call:
   * `onlineThreads` online, `live` tasks submitted and not yet ended (running or waiting). */
  advance(t: number, onlineThreads: number, live: number): void {
    const dt = t - this.last;
    if (dt > 0) {
      const idle = onlineThreads - this.running;
      if (idle > 0) {
        this.idleMinutes += idle * dt;
        const waiting = live - this.running;
        if (waiting > 0) this.idleWaitingMinutes += Math.min(idle, waiting) * dt;
      }
    }
    this.last = t;
  }

  start(): void {
    this.running++;
  }

  stop(): void {
    this.running--;
  }
}

/** The online thread-minutes by what they did, from a run's capacity counters. */
export function threadUse(c: {
  completedMinutes: number;
  lostMinutes: number;
  inProgressMinutes: number;
  idleMinutes: number;
  idleWaitingMinutes: number;
}): ThreadUse {
  return {
    completed: c.completedMinutes,
    lost: c.lostMinutes,
    inProgress: c.inProgressMinutes,
    idleWaiting: c.idleWaitingMinutes,
    idleNothing: c.idleMinutes - c.idleWaitingMinutes,
  };
}

/** The same as shares of the online thread-minutes (they sum to 1). */
export function threadUseShares(u: ThreadUse, threadMinutes: number): ThreadUse {
  const f = (x: number) => (threadMinutes > 0 ? x / threadMinutes : 0);
  return { completed: f(u.completed), lost: f(u.lost), inProgress: f(u.inProgress), idleWaiting: f(u.idleWaiting), idleNothing: f(u.idleNothing) };
}
