// What the manager stored of a channel's pages: the latest version of each, and
// every version of one page.
import type { PageVersion } from '../domain/records.js';
import type { ChannelService } from './channels.js';
import type { ServiceCore } from './core.js';

export type StoredPage = PageVersion & { url: string };

export class PageService {
  constructor(
    private readonly core: ServiceCore,
    private readonly channels: ChannelService,
  ) {}

  /** The latest stored version of a channel's pages, in URL order (NotFoundError for an unknown channel). */
  async latest(channelId: string, opts: { limit?: number; after?: string } = {}): Promise<StoredPage[]> {
    await this.channels.get(channelId);
    const pages = this.core.repos.pages;
    const rows = await pages.latest(channelId, { limit: opts.limit ?? 50, ...(opts.after !== undefined ? { after: opts.after } : {}) });
    return pages.versionsWithText(
      channelId,
      rows.filter((r) => r.latest.version > 0).map((r) => ({ url: r.url, version: r.latest.version })),
    );
  }

  /** All stored versions of one page, oldest first. */
  versions(channelId: string, url: string): Promise<PageVersion[]> {
    return this.core.repos.pages.versions(channelId, url);
  }
}
