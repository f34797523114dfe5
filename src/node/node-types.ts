// What a volunteer node is made of and reports, as types: the task runner it
// drives, the services it starts, its options and its status snapshot. Apart
// from node.ts so the modules plugged into a node (owner service, idle heap,
// lazy runner, status line) read these without the node's assembly.
import type { Logger } from 'pino';
import type { AdaptiveProbeOptions, AppCoordOptions, Coordinate, VivaldiOptions } from '../coords/index.js';
import type { ResultSink, Task, TaskLoad, TaskResult } from '../crawler/task.js';
import type { Libp2pOptions } from '../dht/libp2p.js';
import type { CellOptions } from '../dht/cells.js';
import type { NeighbourOptions } from '../dht/neighbours.js';
import type { RateLimitOptions } from '../dht/rate-limit.js';
import type { VolunteerNode } from './node.js';

/** What the node needs of a task runner; src/crawler's TaskManager fits. */
export interface TaskRunner {
  submit(task: Task): 'accepted' | 'full';
  load(): TaskLoad;
  /** Stop accepting, abort running tasks, return queued + running ones. */
  drain(): Promise<Task[]>;
  close(): Promise<void>;
  /** Like drain(), but tasks are taken again after resume() (the owner's pause). */
  pause?(): Promise<Task[]>;
  resume?(): void;
}

/** A part of the node with a life cycle (the coordinate service, announcements,
 * the manager link…): started in order once the libp2p stack runs, stopped in
 * reverse order on shutdown. */
export interface NodeService {
  readonly name: string;
  start(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

/** Every libp2p option, and the volunteer's own; `privateKey` also signs task hand-overs. */
export interface VolunteerNodeOptions extends Libp2pOptions {
  /** The manager's peer id: only orders it signed are run. */
  manager: string;
  createRunner: (sink: ResultSink) => TaskRunner;
  bootstrap?: string[];
  seed?: number;
  vivaldi?: Partial<VivaldiOptions>;
  /** The filter of the published (application-level) coordinate (src/coords/app-coord.ts). */
  appCoord?: Partial<AppCoordOptions>;
  /** Test hook: delay before answering a coordinate probe from `remote`. */
  probeDelay?: (remote: string) => number;
  /** Test hook (test-plugin.ts): the coordinate this node claims to others, from its true one. */
  claim?: (c: Coordinate) => Coordinate;
  /** Shortest gap between probing rounds (while the coordinate is unsettled), ms. */
  coordIntervalMs?: number;
  /** Longest gap between probing rounds (once settled), ms. */
  coordMaxIntervalMs?: number;
  /** Probes per round while unsettled. */
  coordFanout?: number;
  /** The rest of the probing pace (src/coords/adaptive.ts). */
  coordPace?: Partial<AdaptiveProbeOptions>;
  /** Bounds of the neighbour set probed for Vivaldi (src/dht/neighbours.ts). */
  neighbours?: Partial<NeighbourOptions>;
  /** RTT samples per peer whose minimum feeds Vivaldi (default 4). */
  coordMinWindow?: number;
  announceCheckMs?: number;
  /** Announce once the Vivaldi error estimate is below this (or samples agree
   * with the coordinate), and `announceMinSamples` samples were taken. */
  announceMaxError?: number;
  /** Minimum gap between re-announcements when the cell changes, ms. */
  announceMinGapMs?: number;
  /** Vivaldi samples needed before the first announcement (default 10: the
   * probing pace backs off once samples agree, so waiting for many more would
   * delay a settled node by minutes). */
  announceMinSamples?: number;
  cells?: CellOptions;
  maxHops?: number;
  taskRateLimit?: RateLimitOptions;
  routerCacheTtlMs?: number;
  bootstrapTimeoutMs?: number;
  /** Connections younger than this are never trimmed, ms (connection-trim.ts; default 30 s). */
  connectionGraceMs?: number;
  /** Gap between checks of the connection to the manager, ms (see ManagerLink). */
  managerCheckMs?: number;
  /** Told of every result part and archive batch uploaded, with its size as sent (the owner's ledger counts it). */
  onUploaded?: (bytes: number, result?: TaskResult) => void;
  /** More services, started after the node's own (and stopped before them). */
  services?: (node: VolunteerNode) => NodeService[];
  log: Logger;
}

export interface NodeStatus {
  peerId: string;
  peers: number;
  crawlersKnown: number;
  coord: number[];
  height: number;
  error: number;
  running: number;
  queued: number;
  free: number;
  accepted: number;
  forwarded: number;
  rejected: number;
  pages: number;
  bytes: number;
  /** Bytes per second over the last status interval. */
  bandwidth: number;
  uploadsOk: number;
  uploadsFailed: number;
}
