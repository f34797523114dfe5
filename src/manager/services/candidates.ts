// Candidate channels (sites crawled pages link to, recorded by ingest-links.ts):
// the operator lists them and accepts one (it becomes a channel seeded with the
// sample URLs) or rejects it.
import { ConflictError, NotFoundError } from '../errors.js';
import type { Channel } from '../domain/channel.js';
import type { Candidate } from '../domain/records.js';
import type { ChannelService } from './channels.js';
import type { ServiceCore } from './core.js';

/** Candidates listed at most. */
const LIST_LIMIT = 10_000;

export class CandidateService {
  constructor(
    private readonly core: ServiceCore,
    private readonly channels: ChannelService,
  ) {}

  async list(status?: Candidate['status']): Promise<Candidate[]> {
    return (await this.core.repos.candidates.list(LIST_LIMIT)).filter((c) => status === undefined || c.status === status);
  }

  private async get(origin: string): Promise<Candidate> {
    const c = await this.core.repos.candidates.get(origin);
    if (c === undefined) throw new NotFoundError(`no candidate ${origin}`);
    return c;
  }

  /** Accepts a candidate: it becomes a host channel (extra channel fields allowed), seeded with its sample URLs. */
  async accept(origin: string, extra: Record<string, unknown> = {}): Promise<Channel> {
    const c = await this.get(origin);
    if (c.status === 'accepted') throw new ConflictError(`candidate ${origin} was already accepted as ${c.channel ?? '?'}`);
    const ch = await this.channels.add({ origin, seeds: [origin + '/', ...c.urls], ...extra });
    const { repos } = this.core;
    await this.core.commit.run(() => repos.commit([repos.candidates.putOp({ ...c, status: 'accepted', channel: ch.id })]));
    return ch;
  }

  async reject(origin: string): Promise<Candidate> {
    const { repos } = this.core;
    return this.core.commit.run(async () => {
      const next: Candidate = { ...(await this.get(origin)), status: 'rejected' };
      await repos.commit([repos.candidates.putOp(next)]);
      return next;
    });
  }
}
