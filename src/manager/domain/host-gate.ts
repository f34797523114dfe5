// Politeness across channels: a host may be a channel of its own and also hold
// sub-directory channels, each recrawled on its own schedule. Each task crawls
// its channel politely, but two tasks on one host would hit it in parallel
// (from one volunteer or from two), so the manager keeps at most one task in
// flight per host; the other channels of that host stay due and go out once it
// is free.
//
// Tasks leave flight in several places (final upload, deadline, refusal,
// channel removal), so instead of a release call at each of them the gate asks
// the scheduler whether a remembered task is still the one in flight, and
// forgets it otherwise. Hosts are kept as 30-bit hashes (small integers to V8):
// with a million tasks in flight the gate costs ~20 MB instead of ~70 MB, and a
// collision only makes a channel wait for another host's task.
export class HostGate {
  private readonly byHost = new Map<number, string>();
  private pruneAt = 1024;

  constructor(private readonly isActive: (taskId: string) => boolean) {}

  /** Records that `taskId` is now crawling `host`. */
  hold(host: string, taskId: string): void {
    this.byHost.set(hostKey(host), taskId);
    if (this.byHost.size >= this.pruneAt) this.prune();
  }

  /** True while a task for `host` is still in flight. */
  busy(host: string): boolean {
    const k = hostKey(host);
    const t = this.byHost.get(k);
    if (t === undefined) return false;
    if (this.isActive(t)) return true;
    this.byHost.delete(k);
    return false;
  }

  /** Forgets finished tasks of hosts nobody asked about since. Runs when the map
   * has doubled since the last pass, so its cost is amortised over the holds. */
  private prune(): void {
    for (const [host, t] of this.byHost) if (!this.isActive(t)) this.byHost.delete(host);
    this.pruneAt = Math.max(1024, 2 * this.byHost.size);
  }

  get size(): number {
    return this.byHost.size;
  }
}

/** FNV-1a, folded to 30 bits. */
function hostKey(host: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < host.length; i++) h = Math.imul(h ^ host.charCodeAt(i), 0x01000193);
  return (h ^ (h >>> 30)) & 0x3fffffff;
}
