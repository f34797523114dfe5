// Coverage witnesses: the pages each verifier's check crawl of a channel found.
// A check crawl is compared and never stored as versions, so the store holds
// no crawl of a channel whose every scheduled task went to one volunteer — the
// benchmark's `empty` volunteer is routed its channel from the first task, and
// each of its disputes needed a third crawl (session 7: the stored-crawl
// tie-break never fired). What a check crawl found is evidence already paid
// for: kept here (URLs and digests, no text) per channel and verifier, it
// stands in for a stored crawl in verdicts.ts's settleFromStore, where only
// coverage is judged. A check crawl carries no known pages, so its volunteer
// can name the site's pages only by crawling it.
//
// In memory and bounded (a restart forgets them: the next dispute has a third
// crawl, as before).
import type { CrawlView } from './compare.js';

/** Witnesses kept per channel (the newest, one per volunteer). */
const PER_CHANNEL = 4;
/** Channels remembered (the least recently witnessed are forgotten first). */
const MAX_CHANNELS = 10_000;
/** Pages kept per witness. */
const MAX_PAGES = 2000;

export interface Witness {
  volunteer: string;
  taskId: string;
  issuedAt: number;
  receivedAt: number;
  validators: { url: string; digest: number }[];
}

export class CoverageWitnesses {
  private readonly byChannel = new Map<string, Witness[]>();

  get channels(): number {
    return this.byChannel.size;
  }

  /** Keeps what a finished check crawl of `channel` found (a completed crawl that found pages only). */
  add(channel: string, view: CrawlView): void {
    if (view.status !== 'completed' || view.validators.length === 0) return;
    const w: Witness = { volunteer: view.volunteer, taskId: view.taskId, issuedAt: view.issuedAt, receivedAt: view.receivedAt, validators: view.validators.slice(0, MAX_PAGES) };
    const list = (this.byChannel.get(channel) ?? []).filter((x) => x.volunteer !== w.volunteer);
    list.unshift(w);
    this.byChannel.delete(channel); // re-inserted last: the map's order is the recency order
    this.byChannel.set(channel, list.slice(0, PER_CHANNEL));
    while (this.byChannel.size > MAX_CHANNELS) this.byChannel.delete(this.byChannel.keys().next().value!);
  }

  /**
   * The newest witness of `channel` received since `since`, by a volunteer not
   * `exclude`d and `eligible` (in good standing now), as a crawl view with no
   * text (compare.ts judges coverage from its validators). Null when none.
   */
  find(channel: string, o: { since: number; exclude: readonly string[]; eligible: (volunteer: string) => boolean }): CrawlView | null {
    for (const w of this.byChannel.get(channel) ?? []) {
      if (w.receivedAt < o.since || o.exclude.includes(w.volunteer) || !o.eligible(w.volunteer)) continue;
      return { volunteer: w.volunteer, taskId: w.taskId, status: 'completed', issuedAt: w.issuedAt, receivedAt: w.receivedAt, pages: [], validators: w.validators, interSiteUrls: [] };
    }
    return null;
  }
}
