// Stored pages: per page its latest validators and version, and every version
// (metadata as JSON; its text in the text store's segment files, referenced from the
// metadata as `tx`, or — in databases written before the text store — as raw UTF-8 under their own key, K.pageText).
import { K } from './keys.js';
import type { PageLatest, PageVersion } from '../domain/records.js';
import type { BatchOp, Store } from './store.js';
import type { TextRef } from './text-store.js';

/** A version's metadata as stored: where its text lies (absent in older databases). */
type StoredVersion = PageVersion & { tx?: TextRef };

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
    const vs = (await this.store.getMany<StoredVersion>(wanted.map((w) => K.pageVersion(channel, w.url, w.version)))).filter((v): v is PageVersion => v !== undefined);
    return this.withText(channel, vs);
  }

  /** Every stored version of one page, oldest first, with its text. */
  async versions(channel: string, url: string): Promise<PageVersion[]> {
    const rows = await this.store.range<StoredVersion>(K.pageVersions(channel, url));
    return this.withText(channel, rows.map((r) => r.value));
  }

  private async withText(channel: string, vs: StoredVersion[]): Promise<PageVersion[]> {
    const inStore = vs.filter((v) => v.tx !== undefined);
    const fromStore = await this.store.texts.read(inStore.map((v) => v.tx!));
    const older = vs.filter((v) => v.tx === undefined && v.text === undefined);
    const fromPx = await this.store.getManyText(older.map((v) => K.pageText(channel, v.url, v.version)));
    const text = new Map<StoredVersion, string>();
    inStore.forEach((v, i) => text.set(v, fromStore[i]!));
    older.forEach((v, i) => text.set(v, fromPx[i] ?? ''));
    return vs.map(({ tx: _tx, ...v }, i) => ({ ...v, text: v.text ?? text.get(vs[i]!) ?? '' }));
  }

  latestOp(channel: string, url: string, latest: PageLatest): BatchOp {
    return { type: 'put', key: K.pageLatest(channel, url), value: latest };
  }

  /** New versions: their texts are written to the text store now (before the batch that
   * references them is committed); the returned operations store their metadata. */
  async versionOps(channel: string, versions: { meta: Omit<PageVersion, 'text'>; text: string }[]): Promise<BatchOp[]> {
    const refs = await this.store.texts.append(versions.map((v) => v.text));
    return versions.map(({ meta }, i) => ({ type: 'put', key: K.pageVersion(channel, meta.url, meta.version), value: { ...meta, tx: refs[i] } }));
  }

  /** Deletes everything stored for a channel's pages. */
  async deleteChannelOps(channel: string): Promise<BatchOp[]> {
    const ranges = [K.pagesLatest(channel), K.channelVersions(channel), K.channelTexts(channel)];
    const keys = (await Promise.all(ranges.map((r) => this.store.keys(r)))).flat();
    return keys.map((key) => ({ type: 'del', key }));
  }
}
