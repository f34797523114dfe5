// The real executables in the NAT test network without --lan (the NAT stack
// runs): `dht-manager serve` on the public segment, `volunteer-crawler join`
// on public hosts (offering relay service) and behind the routers, NATed ones
// bootstrapping through the manager and the public volunteers (two observers
// of their punch port tell a cone NAT from a symmetric one). Shared by
// test/nat/join.test.ts and `npm run nat-check`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch, type RequestInit } from 'undici';
import { NatNet, type NatNetSpec } from './network.js';
import { startManagerProcess, startVolunteerProcess, type ManagerProcess, type VolunteerProcess } from '../processes.js';
import { controlRequest } from '../../src/node/control.js';
import type { OwnerStatus } from '../../src/node/owner-status.js';

/** What a volunteer logged about its reachability and NAT (node/nat-service.ts). */
export interface NatLogLine {
  msg?: string;
  reachability?: string;
  dht?: string;
  relays?: string[];
  direct?: string[];
  peer?: string;
  reason?: string;
  natType?: string;
  mapping?: string;
  /** The peer's public ip:port a punched connection goes to. */
  remote?: string;
  /** The pull fallback: on (nobody can dial it) or off, and the orders one pull brought and how many it accepted. */
  pull?: boolean;
  orders?: number;
  accepted?: number;
}

export interface VolunteerNat {
  /** The last reachability it logged, and its DHT mode then. */
  reachability: string | null;
  dht: string | null;
  relays: number;
  /** The last NAT type its hole punch logged. */
  natType: string | null;
  punched: number;
  punchFailed: number;
  /** It pulls its tasks (its last pull-mode line), and the orders its pulls brought that it accepted. */
  pull: boolean;
  tasksPulled: number;
}

export class JoinNet {
  readonly volunteers = new Map<string, VolunteerProcess>();
  manager!: ManagerProcess;
  /** The manager's operator API, through a Unix-socket bridge into its namespace. */
  private agent: Agent | undefined;
  static readonly API_PORT = 8787;

  private constructor(
    readonly net: NatNet,
    private readonly dir: string,
  ) {}

  /** Builds `spec` and starts the manager in `manager`, volunteers on the other public hosts (with --relay) and on every router's LAN (with --upnp where the router offers mappings; `hostArgs` adds flags for one NATed host, `hostEnv` environment variables, e.g. a test plugin).
   * `logs`: every process's whole output goes to <dir>/logs/<host>.log (read by natLines; kept by stop({ keep: true })) instead of an in-memory tail. */
  static async start(spec: NatNetSpec, o: { publicVolunteers: string[]; skip?: string[]; managerArgs?: string[]; volunteerArgs?: string[]; hostArgs?: Record<string, string[]>; hostEnv?: Record<string, Record<string, string>>; logs?: boolean }): Promise<JoinNet> {
    const net = NatNet.build(spec);
    const jn = new JoinNet(net, mkdtempSync(join(tmpdir(), 'volcrawl-nat-join-')));
    const io = (h: string) => net.io(h, { ...(o.logs === true ? { logFile: join(jn.dir, 'logs', `${h}.log`) } : {}), ...(o.hostEnv?.[h] !== undefined ? { env: o.hostEnv[h] } : {}) });
    try {
      const announce = `/ip4/${net.host('manager').ip}/tcp/4101`;
      jn.manager = await startManagerProcess(join(jn.dir, 'manager'), ['--listen', '/ip4/0.0.0.0/tcp/4101', '--announce', announce, '--http-port', String(JoinNet.API_PORT), ...(o.managerArgs ?? [])], io('manager'), { lan: false });
      const listen = ['--listen', '/ip4/0.0.0.0/tcp/4001', '--threads', '1', ...(o.volunteerArgs ?? [])];
      await Promise.all(o.publicVolunteers.map(async (h) => jn.volunteers.set(h, await startVolunteerProcess(h, jn.manager, join(jn.dir, h), [...listen, '--relay'], io(h), { lan: false }))));
      const boot = { peerId: jn.manager.peerId, addrs: [...jn.manager.addrs, ...o.publicVolunteers.map((h) => `/ip4/${net.host(h).ip}/tcp/4001/p2p/${jn.volunteers.get(h)!.peerId}`)] };
      const natted = spec.routers.flatMap((r) => (r.hosts ?? []).map((h) => ({ h, upnp: r.upnp === true }))).filter(({ h }) => !(o.skip ?? []).includes(h));
      await Promise.all(natted.map(async ({ h, upnp }) => jn.volunteers.set(h, await startVolunteerProcess(h, boot, join(jn.dir, h), [...listen, ...(upnp ? ['--upnp'] : []), ...(o.hostArgs?.[h] ?? [])], io(h), { lan: false }))));
      return jn;
    } catch (err) {
      await jn.stop();
      throw err;
    }
  }

  /** Its JSON log lines that carry NAT fields, oldest first. */
  natLines(host: string): NatLogLine[] {
    const out: NatLogLine[] = [];
    const h = this.volunteers.get(host)!;
    // The whole log (a fresh file per process); the in-memory tail when there is no file.
    const text = h.logFile !== null ? readFileSync(h.logFile, 'utf8') : h.output(100_000);
    for (const l of text.split('\n')) {
      if (!l.startsWith('{') || !/"(reachability|natType|pull)":|hole punch|pulled tasks/.test(l)) continue;
      try {
        out.push(JSON.parse(l) as NatLogLine);
      } catch {
        // not JSON after all
      }
    }
    return out;
  }

  /** The last state each kind of line reported. */
  natOf(host: string): VolunteerNat {
    const lines = this.natLines(host);
    const last = <K extends keyof NatLogLine>(k: K) => lines.findLast((l) => l[k] !== undefined)?.[k];
    const reach = lines.findLast((l) => l.reachability !== undefined);
    return {
      reachability: reach?.reachability ?? null,
      dht: reach?.dht ?? null,
      relays: reach?.relays?.length ?? 0,
      natType: (last('natType') as string | undefined) ?? null,
      punched: lines.filter((l) => l.msg?.startsWith('hole punched') === true).length,
      punchFailed: lines.filter((l) => l.msg?.startsWith('hole punch failed') === true).length,
      pull: (last('pull') as boolean | undefined) ?? false,
      tasksPulled: lines.filter((l) => l.msg === 'pulled tasks from the manager').reduce((n, l) => n + (l.accepted ?? 0), 0),
    };
  }

  /** A volunteer's data directory (its owner's control socket lives there). */
  dataDir(host: string): string {
    return join(this.dir, host);
  }

  /** A JSON request to the manager's operator API. */
  async api<T>(path: string, init?: RequestInit): Promise<{ status: number; body: T }> {
    this.agent ??= new Agent({ connect: { socketPath: await this.net.bridge('manager', JoinNet.API_PORT) } });
    const res = await fetch(`http://127.0.0.1:${JoinNet.API_PORT}${path}`, { ...init, dispatcher: this.agent });
    return { status: res.status, body: (await res.json()) as T };
  }

  /** Runs `fn`; its error, if any, comes back with the last lines of every process's output. */
  async explained<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const logs = [this.manager, ...this.volunteers.values()].map((p) => `--- ${p.name}\n${p.output(60)}`).join('\n');
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n${logs}`, { cause: err });
    }
  }

  /** A text response of the manager's API (/metrics). */
  async apiText(path: string): Promise<string> {
    this.agent ??= new Agent({ connect: { socketPath: await this.net.bridge('manager', JoinNet.API_PORT) } });
    return (await fetch(`http://127.0.0.1:${JoinNet.API_PORT}${path}`, { dispatcher: this.agent })).text();
  }

  /** What the volunteer's running node says of itself (`volunteer-crawler status`: the control socket), or null when it does not answer. */
  async status(host: string): Promise<OwnerStatus | null> {
    return ((await controlRequest(this.dataDir(host), { cmd: 'status' }).catch(() => null)) as OwnerStatus | null) ?? null;
  }

  /** Stops every process and deletes the network; the data directories and logs (volunteer.log in each, and
   * logs/ with `logs`) are deleted too unless `keep`. Returns the directory when it was kept. */
  async stop(o: { keep?: boolean } = {}): Promise<string | null> {
    await this.agent?.close();
    await this.net.destroy();
    if (o.keep === true) return this.dir;
    rmSync(this.dir, { recursive: true, force: true });
    return null;
  }
}
