// The operator API's responses, one type per endpoint: the route handlers
// (routes.ts) return them and the demo's client (demo/api.ts) reads them, so a
// change of shape fails the type check on both sides.
import type { Load } from '../../dht/peers.js';
import type { WireCoord } from '../../dht/signing.js';
import type { OwnerPauseReason, ReachKind } from '../../dht/volunteer-state.js';
import type { RoundReport, StrategyName, SystemLoad } from '../../recrawl/index.js';
import type { CrawlerLoad } from '../crawler-load.js';
import type { Channel, RecrawlHistoryRecord } from '../domain/channel.js';
import type { Candidate, Counters, TaskRecord } from '../domain/records.js';
import type { SeedImport } from '../services/channels.js';
import type { StoredPage } from '../services/pages.js';
import type { GroupReport } from '../services/reporting.js';

/** Every error: 4xx/5xx with this body. */
export interface ErrorView {
  error: string;
}

/** GET /api/status */
export interface StatusView {
  peerId: string | null;
  addrs: string[];
  channels: number;
  strategy: StrategyName;
  rateCap: number | null;
  tasks: { queued: number; issued: number; running: number };
  crawlers: number;
  counters: Counters;
}

/** GET /api/channels?limit&after */
export interface ChannelListView {
  channels: Channel[];
  /** The `after` of the next page, null on the last one. */
  next: string | null;
}

/** GET /api/channels/:id */
export type ChannelView = Channel & {
  schedule: { intervalMinutes: number; dueAt: number | null; inFlight: string | null; updates: number };
  hostCoord: WireCoord | null;
  history: RecrawlHistoryRecord[];
};

/** POST /api/channels/import */
export interface ImportView {
  added: number;
  ids: string[];
  skipped: SeedImport['skipped'];
}

/** DELETE /api/channels/:id */
export interface DeletedView {
  deleted: string;
}

/** GET /api/channels/:id/content?limit&after */
export interface ContentView {
  channel: string;
  pages: StoredPage[];
}

export interface CrawlerView {
  id: string;
  coord: WireCoord | null;
  load: Load | null;
  rttMs: number | null;
  lastSeenSecondsAgo: number;
  /** What the volunteer's owner lets it do, as it last reported (null: no report yet). Paused ones get no task. */
  owner: { state: 'running' | 'paused'; reasons: OwnerPauseReason[]; since: number; reportedSecondsAgo: number } | null;
  /** How others reach it (docs/nat.md): public, mapped, punched, relayed, pull, starting, unreachable; null: not reported (a LAN network). */
  reachability: ReachKind | null;
}

/** GET /api/crawlers */
export interface CrawlersView {
  online: number;
  /** Of those online, paused by their owner's controls. */
  paused: number;
  crawlers: CrawlerView[];
}

/** GET /api/tasks?state&limit: counts, and the tasks (or queued channel ids) of one state. */
export interface TasksView {
  queued: number;
  issued: number;
  running: number;
  /** Failed tasks remembered (most recent first in `tasks` with state=failed). */
  failedRecent: number;
  tasks?: TaskRecord[];
  channels?: string[];
}

/** GET /api/groups */
export interface GroupsView {
  strategy: StrategyName;
  /** Reassignment rounds since the database was created. */
  rounds: number;
  groups: GroupReport[];
  /** Formula (5), weighted and not, over the channels with at least one update. */
  updateQuality: { weighted: number | null; unweighted: number | null };
  lastRound: RoundReport | null;
  /** The last rounds, oldest first (`at` and intervals in the manager's minutes). */
  recentRounds: RoundReport[];
  /** The crawlers' load the last round was fed (CAF steers on it; null: none heard, or before a round). */
  roundLoad: SystemLoad | null;
  /** The crawlers' load summed now (crawler-load.ts), or null without a network. */
  crawlerLoad: CrawlerLoad | null;
}

/** GET /api/candidates?status */
export interface CandidatesView {
  candidates: Candidate[];
}
