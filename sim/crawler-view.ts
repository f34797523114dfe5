// The engine owns the crawlers' state; the router, its candidate filter, the
// forwarding scan and the stretch samples read it through this view, so none
// of them depends on the engine.

/** What routing needs of the crawlers' state (the engine owns it). */
export interface CrawlerView {
  readonly online: Uint8Array;
  readonly running: Uint8Array;
  readonly qLen: Uint8Array;
  readonly threads: number;
  readonly queue: number;
  /** Drops expired tasks from c's queue (so its load is current). */
  purge(c: number, t: number): void;
  /** Puts task s on crawler c if it has room; false when it is full. */
  accept(s: number, c: number, t: number): boolean;
}
