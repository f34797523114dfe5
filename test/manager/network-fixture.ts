// A loopback network for the manager's end-to-end tests: the local test web,
// the manager as `dht-manager serve` starts it (bootstrap peer, HTTP API on an
// ephemeral port, data in a temp dir), and real VolunteerNodes that join
// through it and run only the orders it signs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { generateKeyPair } from '@libp2p/crypto/keys';
import type { PrivateKey } from '@libp2p/interface';
import { VolunteerNode, type VolunteerNodeOptions } from '../../src/node/node.js';
import { startManager, type RunningManager } from '../../src/manager/serve.js';
import type { ManagerOptions } from '../../src/manager/manager.js';
import type { StrategyName } from '../../src/recrawl/index.js';
import { TestWeb, type SiteSpec } from '../../testbed/web/testweb.js';

export interface LoopbackNetworkOptions {
  /** Prefix of the manager's temp data dir. */
  dirPrefix: string;
  sites: SiteSpec[];
  webSeed: number;
  warc: boolean;
  /** `--archive full`: volunteers upload their exchanges (default: text). */
  archive?: 'text' | 'full';
  /** Manager options beyond the serve flags (group intervals, retry delay). */
  manager: Partial<ManagerOptions>;
  /** Volunteer i gets the seed volunteerSeed + i. */
  volunteerSeed: number;
  /** The recrawl strategy (default iir, which these tests were written against). */
  strategy?: StrategyName;
}

export class LoopbackNetwork {
  readonly volunteers: VolunteerNode[] = [];

  private constructor(
    readonly dir: string,
    readonly web: TestWeb,
    readonly mgr: RunningManager,
    private readonly log: Logger,
    private readonly volunteerSeed: number,
  ) {}

  /** Starts the test web and the manager; if the manager fails, the web is
   * closed and the data dir removed before the error is rethrown. */
  static async start(o: LoopbackNetworkOptions): Promise<LoopbackNetwork> {
    const dir = mkdtempSync(join(tmpdir(), o.dirPrefix));
    const log = pino({ level: process.env.VOLCRAWL_TEST_LOG ?? 'silent' });
    let web: TestWeb | undefined;
    try {
      web = await TestWeb.start(o.sites, { seed: o.webSeed });
      const mgr = await startManager(
        { dataDir: dir, listen: ['/ip4/127.0.0.1/tcp/0'], httpPort: 0, httpHost: '127.0.0.1', strategy: o.strategy ?? 'iir', lan: true, warc: o.warc, ...(o.archive !== undefined ? { archive: o.archive } : {}), sync: false, tick: 200, routeConcurrency: 4, logLevel: 'silent' },
        log,
        o.manager,
      );
      return new LoopbackNetwork(dir, web, mgr, log, o.volunteerSeed);
    } catch (err) {
      await web?.close();
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** Starts volunteer `i` (a fresh key unless one is given), bootstrapped off the manager. */
  async addVolunteer(i: number, createRunner: VolunteerNodeOptions['createRunner'], privateKey?: PrivateKey): Promise<VolunteerNode> {
    const node = this.mgr.node;
    const boot = node.multiaddrs().map((a) => (a.includes('/p2p/') ? a : `${a}/p2p/${node.peerId}`));
    const n = await VolunteerNode.start({
      privateKey: privateKey ?? (await generateKeyPair('Ed25519')),
      manager: node.peerId,
      createRunner,
      listen: ['/ip4/127.0.0.1/tcp/0'],
      bootstrap: boot,
      allowPrivateAddrs: true,
      seed: this.volunteerSeed + i,
      coordIntervalMs: 200,
      announceCheckMs: 500,
      inboundConnectionThreshold: 10_000,
      log: this.log.child({ node: i }),
    });
    this.volunteers.push(n);
    return n;
  }

  /** Adds a channel through the operator API (as an operator would); returns its id. */
  async addChannel(body: Record<string, unknown>): Promise<{ id: string }> {
    const res = await fetch(`${this.mgr.api.url}/api/channels`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`adding a channel answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { id: string };
  }

  /** Kills every volunteer (no migration), then stops the manager and the web. */
  async close(): Promise<void> {
    await Promise.all(this.volunteers.map((n) => n.kill()));
    await this.mgr.stop();
    await this.web.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
