// Keeps the manager's copies of the crawlers' loads current. The manager hears a
// crawler's load when it connects (an info query), when a task is routed to it
// (the reply carries it) and when the router refreshes a candidate's coordinate;
// a crawler near no host the manager schedules would go unheard, and its idle
// threads would be missing from what CAF steers on (crawler-load.ts). Every
// `periodMs` the survey asks the crawlers whose copy is older than that for their
// info (the coordinate protocol's own query: the reply carries coordinate and load,
// and the coordinate service notes both; one that does not answer is marked down).
import type { CoordService } from '../dht/coord-protocol.js';
import type { PeerTable } from '../dht/peers.js';

export interface LoadSurveyOptions {
  peers: PeerTable;
  coords: Pick<CoordService, 'info'>;
  /** How often, and the age of a copy that is asked again, ms. */
  periodMs?: number;
  /** Queries a pass makes at most (the oldest copies first), and at once. */
  maxPerPass?: number;
  concurrency?: number;
}

export const DEFAULT_SURVEY_MS = 60_000;

export class LoadSurvey {
  private timer: ReturnType<typeof setInterval> | undefined;
  private busy = false;
  /** Queries made (tests and the log). */
  asked = 0;

  constructor(private readonly o: LoadSurveyOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.pass(), this.o.periodMs ?? DEFAULT_SURVEY_MS);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }

  /** One pass: asks the crawlers whose load copy is older than the period. */
  async pass(now = performance.now()): Promise<number> {
    if (this.busy) return 0;
    this.busy = true;
    try {
      const age = this.o.periodMs ?? DEFAULT_SURVEY_MS;
      const due = this.o.peers
        .all()
        .filter((p) => p.crawler && !p.down && !(now - (p.loadAt ?? -Infinity) < age))
        .sort((a, b) => (a.loadAt ?? -Infinity) - (b.loadAt ?? -Infinity))
        .slice(0, this.o.maxPerPass ?? 1024)
        .map((p) => p.id);
      const width = this.o.concurrency ?? 8;
      for (let i = 0; i < due.length; i += width) {
        await Promise.all(due.slice(i, i + width).map((id) => this.o.coords.info(id).catch(() => undefined)));
      }
      this.asked += due.length;
      return due.length;
    } finally {
      this.busy = false;
    }
  }
}
