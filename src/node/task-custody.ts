// The tasks a volunteer holds, from acceptance to their last upload: the
// signed order and hand-over chain each came with, result uploads and archive
// batches to the order's storage node, and handing tasks on to a nearby
// crawler when the node leaves or pauses (a task no one takes is given back to
// the manager). Apart from node.ts because this is the node's one piece of
// per-task state and its rules (what a migrated or drained task may still
// upload) hold whatever else the node runs.
import type { Logger } from 'pino';
import type { PrivateKey } from '@libp2p/interface';
import type { Coordinate } from '../coords/index.js';
import type { Task, TaskResult } from '../crawler/task.js';
import { emptyResult } from '../crawler/task.js';
import type { VolcrawlLibp2p } from '../dht/libp2p.js';
import { toWireCoord } from '../dht/peers.js';
import type { Router, RouteResult } from '../dht/router.js';
import { uploadResult } from '../dht/upload.js';
import { uploadArchiveBatch } from '../dht/archive-upload.js';
import { MAX_HANDOVER_LINKS, signHandover, type Handover, type SignedEnvelope, type TaskOrder } from '../dht/signing.js';
import { TaskArchive, type SendBatch } from './task-archive.js';

interface Held {
  order: TaskOrder;
  envelope: SignedEnvelope;
  /** The signed chain that handed the task to this node (migration), if any. */
  handover?: Handover[];
}

export interface TaskCustodyOptions {
  libp2p: VolcrawlLibp2p;
  /** Signs the hand-over of a task this node passes on. */
  privateKey: PrivateKey;
  /** The coordinate result uploads carry (the published one: the manager places hosts from it). */
  coord: () => Coordinate;
  /** Routes an order on to another crawler (the node's Router). */
  route: Router['route'];
  /** Makes the task receiver treat the order as new should it come back. */
  forget: (orderId: string) => void;
  /** Told of every result part and archive batch uploaded, with its size as sent. */
  onUploaded?: (bytes: number, result?: TaskResult) => void;
  log: Logger;
}

export class TaskCustody {
  private readonly o: TaskCustodyOptions;
  private readonly held = new Map<string, Held>();
  private readonly migrated = new Set<string>();
  /** Tasks no crawler took on pause or leave, being reported back to the manager. */
  private readonly givenBack = new Set<string>();
  private readonly uploads = new Set<Promise<void>>();
  /** Set on leave: results of tasks the drain cancelled are not uploaded (they migrate). */
  private draining = false;
  pages = 0;
  bytes = 0;
  uploadsOk = 0;
  uploadsFailed = 0;

  constructor(o: TaskCustodyOptions) {
    this.o = o;
  }

  private get peerId(): string {
    return this.o.libp2p.peerId.toString();
  }

  /** Records a task the receiver accepted, with the order and chain that brought it. */
  hold(taskId: string, order: TaskOrder, envelope: SignedEnvelope, handover?: Handover[]): void {
    this.held.set(taskId, { order, envelope, ...(handover !== undefined ? { handover } : {}) });
    this.migrated.delete(taskId); // handed on earlier and back again: this node runs it now
  }

  /** Ids of tasks held (accepted and not finished). */
  ids(): string[] {
    return [...this.held.keys()];
  }

  /** From now on, results of cancelled tasks are not uploaded: the drain aborted them for migration. */
  startDraining(): void {
    this.draining = true;
  }

  /** Settles once every upload in flight has. */
  async uploadsSettled(): Promise<void> {
    await Promise.allSettled([...this.uploads]);
  }

  /** A task whose order asks for its exchanges: they go to the order's storage node in batches. */
  archiveFor(task: Task): TaskArchive {
    const send: SendBatch = async (batch, entries, raw) => {
      // Looked up when the first batch goes: the runner starts a task before the receiver records it as held.
      const h = this.held.get(task.id);
      if (h === undefined) throw new Error('task no longer held');
      await uploadArchiveBatch(this.o.libp2p, h.order.storage, { orderId: h.order.id, batch, ...(h.handover !== undefined ? { handover: h.handover } : {}), entries, raw });
      this.o.onUploaded?.(raw.byteLength);
    };
    return new TaskArchive(task.id, send, this.o.log);
  }

  upload(result: TaskResult): Promise<void> {
    const p = this.doUpload(result);
    this.uploads.add(p);
    void p.catch(() => undefined).finally(() => this.uploads.delete(p));
    return p;
  }

  private async doUpload(result: TaskResult): Promise<void> {
    const back = this.givenBack.has(result.taskId);
    if (this.migrated.has(result.taskId) && !back) return; // completed elsewhere
    if (this.draining && result.status === 'cancelled' && !back) return; // aborted for migration
    const h = this.held.get(result.taskId);
    if (h === undefined) {
      this.o.log.warn({ task: result.taskId }, 'result for a task this node does not hold; dropped');
      return;
    }
    try {
      await uploadResult(this.o.libp2p, h.order.storage, {
        orderId: h.order.id,
        host: h.order.host,
        hostRttMs: result.stats?.rttMs ?? null,
        crawlerCoord: toWireCoord(this.o.coord()),
        ...(h.handover !== undefined ? { handover: h.handover } : {}),
        result,
      });
      this.uploadsOk++;
      // About what went up: the result as JSON (the wire adds framing and encryption, a few percent).
      if (this.o.onUploaded) this.o.onUploaded(Buffer.byteLength(JSON.stringify(result)), result);
    } catch (err) {
      this.uploadsFailed++;
      this.o.log.error({ task: result.taskId, err: String(err) }, 'upload failed');
      throw err;
    } finally {
      if (result.final) {
        this.held.delete(result.taskId);
        this.pages += result.stats?.pagesFetched ?? 0;
        this.bytes += result.stats?.bytes ?? 0;
      }
    }
  }

  /** Routes each task to another crawler near this one, with a hand-over
   * signed by this node, exactly as on leave; a task no one takes is left to
   * the manager, which re-issues it after its deadline. */
  async handOn(tasks: Task[], into?: { migrated: string[]; lost: string[] }): Promise<{ migrated: string[]; lost: string[] }> {
    const { migrated, lost } = into ?? { migrated: [], lost: [] };
    this.o.log.info({ tasks: tasks.length }, 'migrating tasks');
    await Promise.all(
      tasks.map(async (t) => {
        const h = this.held.get(t.id);
        if (h === undefined) {
          lost.push(t.id);
          return;
        }
        this.migrated.add(t.id);
        // A crawler near this one may forward the order straight back: the
        // receiver must then treat it as new (a paused node passes it on), not
        // answer "accepted" for a task it no longer holds.
        this.o.forget(h.order.id);
        let r: RouteResult | undefined;
        try {
          // The new holder gets a hand-over signed by this node (appended to the
          // chain that brought the task here), so the storage node accepts its upload.
          const handover = async (to: string): Promise<Handover[]> => [
            ...(h.handover ?? []).slice(-(MAX_HANDOVER_LINKS - 1)),
            await signHandover(this.o.privateKey, this.peerId, h.order.id, to),
          ];
          r = await this.o.route(h.envelope, h.order, { exclude: new Set([this.peerId]), handover });
        } catch (err) {
          this.o.log.warn({ task: t.id, err: String(err) }, 'migration failed');
        }
        if (r?.status === 'accepted') {
          migrated.push(t.id);
          this.held.delete(t.id);
          this.o.log.info({ task: t.id, to: r.by }, 'task migrated');
        } else {
          lost.push(t.id);
          // Told to the manager at once (a task ended 'cancelled' is failed and
          // reissued), instead of being left to its deadline.
          this.givenBack.add(t.id);
          const now = Date.now();
          const ok = await this.upload({ ...emptyResult(t, 'cancelled', now, now), reason: `the volunteer stepped aside and no crawler nearby took the task (${r?.status ?? 'error'})` }).then(
            () => true,
            () => false,
          );
          this.givenBack.delete(t.id);
          this.held.delete(t.id);
          this.o.log.warn({ task: t.id, status: r?.status, toldManager: ok }, ok ? 'task could not be migrated; given back to the manager' : 'task could not be migrated; the manager will reissue it after its deadline');
        }
      }),
    );
    return { migrated, lost };
  }
}
