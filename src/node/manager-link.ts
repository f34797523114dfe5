// Keeps a volunteer connected to its manager. Nothing else would bring the two
// back together after the manager restarts (or the volunteer's network drops):
// the manager does not know volunteers' addresses, and the coordinate protocol
// only probes crawlers. While there is no connection, the link re-dials the
// manager's bootstrap addresses (then whatever the peer store knows) with a
// capped exponential backoff; once connected, the manager's own coordinate
// probes find the volunteer again and routing to it resumes.
import type { Logger } from 'pino';
import type { Multiaddr } from '@multiformats/multiaddr';
import { peerIdFromString } from '@libp2p/peer-id';
import type { VolcrawlLibp2p } from '../dht/libp2p.js';
import { BackoffLoop } from '../dht/backoff-loop.js';

export interface ManagerLinkOptions {
  libp2p: VolcrawlLibp2p;
  /** The manager's peer id. */
  manager: string;
  /** Bootstrap addresses; those with the manager's /p2p/ id are dialled first. */
  bootstrap: Multiaddr[];
  /** Gap between connection checks while connected, and the first retry delay, ms. */
  checkMs?: number;
  /** Longest gap between reconnection attempts, ms. */
  maxBackoffMs?: number;
  dialTimeoutMs?: number;
  log: Logger;
}

export class ManagerLink {
  private readonly loop: BackoffLoop;
  private lost = false;
  /** Reconnections made (a status figure). */
  reconnects = 0;

  constructor(private readonly o: ManagerLinkOptions) {
    this.loop = new BackoffLoop(() => this.check(), o.checkMs ?? 5_000, o.maxBackoffMs ?? 60_000);
  }

  start(): void {
    this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  private connected(): boolean {
    return this.o.libp2p.getConnections(peerIdFromString(this.o.manager)).length > 0;
  }

  /** True when connected or reconnected. */
  private async check(): Promise<boolean> {
    if (this.connected()) {
      this.lost = false;
      return true;
    }
    if (!this.lost) {
      this.lost = true;
      this.o.log.warn({ manager: this.o.manager }, 'lost the connection to the manager; reconnecting');
    }
    if (!(await this.redial())) return false;
    this.reconnects++;
    this.lost = false;
    this.o.log.info({ manager: this.o.manager }, 'reconnected to the manager');
    return true;
  }

  private async redial(): Promise<boolean> {
    const own = this.o.bootstrap.filter((a) => a.getComponents().some((c) => c.name === 'p2p' && c.value === this.o.manager));
    const targets: (Multiaddr | ReturnType<typeof peerIdFromString>)[] = [...own, peerIdFromString(this.o.manager)];
    for (const t of targets) {
      if (!this.loop.running) return false;
      try {
        await this.o.libp2p.dial(t, { signal: AbortSignal.timeout(this.o.dialTimeoutMs ?? 15_000) });
        return true;
      } catch (err) {
        this.o.log.debug({ target: t.toString(), err: String(err) }, 'manager dial failed');
      }
    }
    return false;
  }
}
