// Stored pages: per page its latest validators and version, and every version
// (metadata as JSON, text as raw UTF-8 beside it).
import { K } from './keys.js';
import type { PageLatest, PageVersion } from '../domain/records.js';
import type { BatchOp, Store } from './store.js';

export class PageRepository {
  constructor(private readonly store: Store) {}

  latestOf(channel: string, urls: string[]): Promise<(PageLatest | undefined)[]> {
    return this.store.getMany<PageLatest>(urls.map((u) => K.pageLatest(channel, u)));
  }

  /** Latest records of a channel's pages in URL order (all of them unless `limit`). */
  async latest(channel: string, opts: { limit?: number; after?: string } = {}): Promise<{ url: string; latest: PageLatest }[]> {
    return (await this.store.range<PageLatest>(K.pagesLatest(channel), opts)).map((r) => ({ url: r.rest, latest: r.value }));
  }

  /** These versions with their texts (versions that are gone are left out). */
  async versionsWithText(channel: string, wanted: { url: string; version: number }[]): Promise<PageVersion[]> {
    const vs = (await this.store.getMany<PageVersion>(wanted.map((w) => K.pageVersion(channel, w.url, w.version)))).filter((v): v is PageVersion => v !== undefined);
    return this.withText(channel, vs);
  }

  /** Every stored version of one page, oldest first, with its text. */
  async versions(channel: string, url: string): Promise<PageVersion[]> {
    const rows = await this.store.range<PageVersion>(K.pageVersions(channel, url));
    return this.withText(channel, rows.map((r) => r.value));
  }

  private async withText(channel: string, vs: PageVersion[]): Promise<PageVersion[]> {
    const texts = await this.store.getManyText(vs.map((v) => K.pageText(channel, v.url, v.version)));
    return vs.map((v, i) => ({ ...v, text: v.text ?? texts[i] ?? '' }));
  }

  latestOp(channel: string, url: string, latest: PageLatest): BatchOp {
    return { type: 'put', key: K.pageLatest(channel, url), value: latest };
  }

  /** A new version: its metadata and its text. */
  versionOps(channel: string, meta: Omit<PageVersion, 'text'>, text: string): BatchOp[] {
    return [
      { type: 'put', key: K.pageVersion(channel, meta.url, meta.version), value: meta },
      { type: 'put', key: K.pageText(channel, meta.url, meta.version), value: text, valueEncoding: 'utf8' },
    ];
  }

  /** Deletes everything stored for a channel's pages. */
  async deleteChannelOps(channel: string): Promise<BatchOp[]> {
    const ranges = [K.pagesLatest(channel), K.channelVersions(channel), K.channelTexts(channel)];
    const keys = (await Promise.all(ranges.map((r) => this.store.keys(r)))).flat();
    return keys.map((key) => ({ type: 'del', key }));
  }
}
