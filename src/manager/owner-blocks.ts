// Hosts volunteers' owners block, as the manager learns them: a task that
// ended 'refused' with outcome 'owner-blocked' names (host, volunteer), and
// no later order for that host is routed to that volunteer (the router's
// exclude set), instead of reaching it and being passed on (one extra hop).
// Bounded: the least recently refused pairs go first beyond `max`. Kept in
// memory only: after a manager restart the first order may reach a blocking
// volunteer again, which passes it on and refuses it again.

/** (host, volunteer) pairs kept at most. */
export const MAX_OWNER_BLOCKS = 50_000;

export class OwnerBlocks {
  /** host → volunteers whose owner blocks it. */
  private readonly byHost = new Map<string, Set<string>>();
  /** Every pair, oldest refusal first ("host volunteer"). */
  private readonly order = new Set<string>();

  constructor(private readonly max = MAX_OWNER_BLOCKS) {}

  note(host: string, volunteer: string): void {
    const h = host.toLowerCase();
    const key = `${h} ${volunteer}`;
    this.order.delete(key);
    this.order.add(key);
    let s = this.byHost.get(h);
    if (s === undefined) this.byHost.set(h, (s = new Set()));
    s.add(volunteer);
    while (this.order.size > this.max) {
      const oldest = this.order.keys().next().value!;
      this.order.delete(oldest);
      const [oh, ov] = oldest.split(' ') as [string, string];
      const os = this.byHost.get(oh);
      os?.delete(ov);
      if (os?.size === 0) this.byHost.delete(oh);
    }
  }

  /** Volunteers that refused `host` because their owner blocks it. */
  refusers(host: string): ReadonlySet<string> {
    return this.byHost.get(host.toLowerCase()) ?? new Set();
  }

  get size(): number {
    return this.order.size;
  }
}
