// What a volunteer node is made of and reports, as types: the task runner it
// drives, the services it starts and its status snapshot (its options stay in
// node.ts: they name the node its services are given). Apart
// from node.ts so the modules plugged into a node (owner service, idle heap,
// lazy runner, status line) read these without the node's assembly.
import type { Task, TaskLoad } from '../crawler/task.js';

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
