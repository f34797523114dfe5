// Volunteers as the trust service sees them (src/manager/trust/service.ts): one
// reputation record per identity (validated on read: a damaged record is
// reported, not trusted), the channels whose pages each volunteer last
// supplied (what a quarantine re-crawls), the check crawls in flight, and the
// trust counters.
import { K } from './keys.js';
import type { BatchOp, Store } from './store.js';

/** The last task by which a volunteer supplied a channel's pages. */
export interface VolunteerWork {
  taskId: string;
  at: number;
}

export class VolunteerRepository {
  constructor(private readonly store: Store) {}

  /** Every stored reputation record, unparsed (the trust module validates them). */
  async all(): Promise<{ id: string; value: unknown }[]> {
    const out: { id: string; value: unknown }[] = [];
    await this.store.scan<unknown>(K.volunteers(), (id, value) => out.push({ id, value }));
    return out;
  }

  putOp(id: string, record: unknown): BatchOp {
    return { type: 'put', key: K.volunteer(id), value: record };
  }

  workOp(peer: string, channel: string, w: VolunteerWork): BatchOp {
    return { type: 'put', key: K.volunteerWork(peer, channel), value: w };
  }

  /** The channels `peer` supplied pages of, with the last such task. */
  async works(peer: string): Promise<{ channel: string; work: VolunteerWork }[]> {
    return (await this.store.range<VolunteerWork>(K.volunteerWorks(peer))).map((r) => ({ channel: r.rest, work: r.value }));
  }

  /** Every stored check in flight, unparsed (the trust module validates them). */
  async checks(): Promise<{ id: string; value: unknown }[]> {
    const out: { id: string; value: unknown }[] = [];
    await this.store.scan<unknown>(K.volunteerChecks(), (id, value) => out.push({ id, value }));
    return out;
  }

  checkOp(id: string, check: unknown): BatchOp {
    return { type: 'put', key: K.volunteerCheck(id), value: check };
  }

  checkDelOp(id: string): BatchOp {
    return { type: 'del', key: K.volunteerCheck(id) };
  }

  counters(): Promise<unknown> {
    return this.store.get<unknown>(K.meta('trust'));
  }

  countersOp(c: unknown): BatchOp {
    return { type: 'put', key: K.meta('trust'), value: c };
  }
}
