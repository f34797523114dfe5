// The owner's block list at the task door. The crawler checks never_fetch on
// every connection, after DNS and on redirects (src/crawler/safety.ts), and a
// task that hits it ends 'refused' with the reason, which goes back to the
// manager. What that alone does not do is stop the network from sending the
// same host here again: the router picks the crawler nearest the host, which
// stays this one. So the node takes no task for a host it knows it will refuse
// — a name on the list, or a host whose task ended refused by the list here
// (an address range matched after DNS, or a redirect to a blocked host) — and
// answers 'full': the task protocol then forwards the order to another crawler
// near the host (the order stays the manager's, signed; no hand-over needed),
// and the blocked host is never fetched from this computer.
import type { Logger } from 'pino';
import type { OwnerBlockList } from '../crawler/safety.js';
import type { ResultSink, Task, TaskResult } from '../crawler/task.js';
import type { TaskRunner } from './node-types.js';

/** Hosts remembered as refused (the oldest is forgotten beyond it). */
const MAX_REFUSED_HOSTS = 10_000;

export class BlockedHosts {
  private readonly refused = new Map<string, string>();

  constructor(private readonly list: OwnerBlockList) {}

  /** Why this node takes no task for `host`, or null. */
  why(host: string): string | null {
    return this.list.hostReason(host) ?? this.refused.get(host.toLowerCase()) ?? null;
  }

  /** A final result: a task refused by the owner's list marks its host. */
  noteResult(r: TaskResult): void {
    if (!r.final || r.status !== 'refused' || (r.outcomes['owner-blocked'] ?? 0) === 0) return;
    const host = hostOf(r.channel.origin);
    if (host === null) return;
    this.refused.delete(host);
    this.refused.set(host, r.reason ?? 'blocked by the owner');
    if (this.refused.size > MAX_REFUSED_HOSTS) this.refused.delete(this.refused.keys().next().value!);
  }

  /** The list changed: what it refused before may be allowed now (and a new entry is checked at the next task). */
  listChanged(): void {
    this.refused.clear();
  }

  get size(): number {
    return this.refused.size;
  }
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** The sink, telling `blocked` of every result on its way up. */
export function blockAwareSink(sink: ResultSink, blocked: BlockedHosts): ResultSink {
  return {
    upload: (r) => {
      blocked.noteResult(r);
      return sink.upload(r);
    },
    ...(sink.archiveFor !== undefined ? { archiveFor: (t: Task) => sink.archiveFor!(t) } : {}),
  };
}

/** The runner, refusing ('full': the order is forwarded) tasks for hosts `blocked` names. */
export function blockAwareRunner(runner: TaskRunner, blocked: BlockedHosts, log: Logger): TaskRunner {
  return {
    submit(task) {
      const host = hostOf(task.scope.origin);
      const why = host !== null ? blocked.why(host) : null;
      if (why !== null) {
        log.info({ task: task.id, host, why }, "task for a host this computer's owner blocks: passed on to another crawler");
        return 'full';
      }
      return runner.submit(task);
    },
    load: () => runner.load(),
    drain: () => runner.drain(),
    close: () => runner.close(),
    ...(runner.pause !== undefined ? { pause: () => runner.pause!() } : {}),
    ...(runner.resume !== undefined ? { resume: () => runner.resume!() } : {}),
  };
}
