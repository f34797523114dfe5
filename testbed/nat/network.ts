// The NAT test network: Linux network namespaces wired as a small Internet.
//
//   public hosts ──┐                    ┌── home router (cone[, UPnP/NAT-PMP]) ── LAN hosts
//   (manager, web, ├── inet (core) ─────┼── home router (symmetric) ── LAN hosts
//    volunteers)   ┘                    └── CGN router (cone) ── home router (cone) ── LAN hosts
//
// Every host and router is its own namespace. Each attachment to the core is a
// point-to-point link in its own /8 (AutoNAT counts confirmations per first
// octet, so public peers must differ there, as on the Internet); the addresses
// are ordinary global unicast ones (libp2p treats the documentation ranges as
// private) and never leave the namespaces, which have no route out. Home LANs
// are 192.168.k.0/24, a carrier-grade NAT's inside is 100.64.k.0/24.
//
// Processes run inside with `ip netns exec` (spawnIn, or SpawnIo.netns for the
// volcrawl executables). destroy() kills everything inside and deletes the
// namespaces; it also runs on exit and on SIGINT/SIGTERM/SIGHUP, and build()
// first sweeps namespaces left by owners that were SIGKILLed.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnNode, type ProcessHandle, type SpawnIo } from '../processes.js';
import { deleteNamespace, ip, listNamespaces, newNetPrefix, nsExec, nsSysctl, onProcessEnd, sweepOrphans } from './netns.js';
import { routerRuleset, upnpConfig, type NatType } from './nat-rules.js';
import { waitForLine } from './lines.js';

const ROOT = resolve(import.meta.dirname, '../..');

export interface RouterSpec {
  name: string;
  nat: NatType;
  /** Name of the router this one sits behind (carrier-grade NAT); default: on the Internet. */
  upstream?: string;
  /** Hosts on this router's LAN. */
  hosts?: string[];
  /** Extra nftables input-chain lines (before the drop of everything from the WAN). */
  extraInput?: string[];
  /** Offer port mappings to the LAN (UPnP IGD and NAT-PMP: Debian's miniupnpd in the router). */
  upnp?: boolean;
}

export interface NatNetSpec {
  /** Hosts on the Internet, each with its own public address. */
  public: string[];
  routers: RouterSpec[];
}

/** The network: the manager, the test web and two public volunteers; a
 * volunteer behind a cone NAT, one behind a symmetric NAT, one behind a cone
 * home router behind a carrier-grade NAT, and one behind a router that offers
 * port mappings (UPnP/NAT-PMP; only where miniupnpd is installed, see hasUpnp). */
export const DEFAULT_SPEC: NatNetSpec = {
  public: ['manager', 'web', 'pub1', 'pub2'],
  routers: [
    { name: 'home1', nat: 'cone', hosts: ['nat1'] },
    { name: 'home2', nat: 'symmetric', hosts: ['nat2'] },
    { name: 'cgn', nat: 'cone' },
    { name: 'home3', nat: 'cone', upstream: 'cgn', hosts: ['nat3'] },
    { name: 'home4', nat: 'cone', hosts: ['nat4'], upnp: true },
  ],
};

/** Whether routers can offer port mappings here (Debian: apt-get install -y miniupnpd-nftables). */
export function hasUpnp(): boolean {
  return spawnSync('miniupnpd', ['--version']).error === undefined;
}

export interface Host {
  name: string;
  /** Namespace to run its processes in. */
  ns: string;
  /** Its own address (public, or private behind its router). */
  ip: string;
  /** The router it sits behind, if any. */
  router?: string;
}

export interface Router extends Host {
  nat: NatType;
  /** Its outside address (public, or the CGN's inside for a router behind one). */
  wanIp: string;
  /** Its inside (LAN) address: the gateway of its hosts. */
  lanIp: string;
  /** The public address its hosts appear from (through every level of NAT). */
  publicIp: string;
}

/** First octets of the Internet links: distinct /8s, none of them private to libp2p. */
const PUBLIC_OCTETS = [11, 21, 31, 41, 51, 61, 71, 81, 91, 101, 111, 121, 131, 141, 151, 161, 171, 181, 191, 201, 211];

function validate(spec: NatNetSpec): void {
  const names = [...spec.public, ...spec.routers.flatMap((r) => [r.name, ...(r.hosts ?? [])])];
  for (const n of names) if (!/^[a-z][a-z0-9]{0,11}$/.test(n)) throw new Error(`host name ${JSON.stringify(n)}: lower-case letters and digits, at most 12`);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined || names.includes('inet')) throw new Error(`host name ${dup ?? 'inet'} is used twice (inet is the core)`);
  const byName = new Map(spec.routers.map((r) => [r.name, r]));
  for (const r of spec.routers) {
    if (r.upstream !== undefined && !byName.has(r.upstream)) throw new Error(`router ${r.name}: no upstream router ${r.upstream}`);
    if (r.upstream !== undefined && byName.get(r.upstream)!.upstream !== undefined) throw new Error(`router ${r.name}: at most two levels of NAT`);
  }
  if (spec.public.length + spec.routers.filter((r) => r.upstream === undefined).length > PUBLIC_OCTETS.length) throw new Error(`at most ${PUBLIC_OCTETS.length} attachments to the Internet`);
}

export class NatNet {
  readonly hosts = new Map<string, Host>();
  readonly routers = new Map<string, Router>();
  private readonly namespaces: string[] = [];
  private readonly children = new Set<ProcessHandle>();
  private readonly unhook: () => void;
  private destroyed = false;

  private constructor(readonly prefix: string) {
    this.unhook = onProcessEnd(() => this.destroySync());
  }

  /** Builds the network (after sweeping orphans of dead owners). On failure nothing is left behind. */
  static build(spec: NatNetSpec = DEFAULT_SPEC): NatNet {
    validate(spec);
    sweepOrphans();
    const net = new NatNet(newNetPrefix());
    try {
      net.wire(spec);
    } catch (err) {
      net.destroySync();
      throw err;
    }
    return net;
  }

  private addNs(role: string): string {
    const ns = `${this.prefix}-${role}`;
    ip('netns', 'add', ns);
    this.namespaces.push(ns);
    nsExec(ns, 'ip', ['link', 'set', 'lo', 'up']);
    return ns;
  }

  /** A veth pair from `a` (named `aIf`) to `b` (named `bIf`), both up. */
  private link(a: string, aIf: string, b: string, bIf: string): void {
    ip('link', 'add', 'name', aIf, 'netns', a, 'type', 'veth', 'peer', 'name', bIf, 'netns', b);
    ip('-n', a, 'link', 'set', aIf, 'up');
    ip('-n', b, 'link', 'set', bIf, 'up');
  }

  private addr(ns: string, dev: string, cidr: string): void {
    ip('-n', ns, 'addr', 'add', cidr, 'dev', dev);
  }

  private wire(spec: NatNetSpec): void {
    const core = this.addNs('inet');
    nsSysctl(core, 'net.ipv4.ip_forward', '1');
    let attach = 0;
    /** Links namespace `ns` to the core; returns [its address, the core's]. */
    const toCore = (ns: string, dev: string): [string, string] => {
      const o = PUBLIC_OCTETS[attach]!;
      this.link(ns, dev, core, `c${attach}`);
      this.addr(core, `c${attach}`, `${o}.0.0.1/24`);
      this.addr(ns, dev, `${o}.0.0.2/24`);
      ip('-n', ns, 'route', 'add', 'default', 'via', `${o}.0.0.1`);
      attach += 1;
      return [`${o}.0.0.2`, `${o}.0.0.1`];
    };
    for (const name of spec.public) {
      const ns = this.addNs(name);
      const [addr] = toCore(ns, 'eth0');
      this.hosts.set(name, { name, ns, ip: addr });
    }
    // Routers on the Internet first, so a CGN exists before the routers behind it.
    const ordered = [...spec.routers].sort((a, b) => Number(a.upstream !== undefined) - Number(b.upstream !== undefined));
    let lanNo = 0;
    for (const r of ordered) {
      lanNo += 1;
      const ns = this.addNs(r.name);
      nsSysctl(ns, 'net.ipv4.ip_forward', '1');
      let wanIp: string;
      let publicIp: string;
      if (r.upstream === undefined) {
        [wanIp] = toCore(ns, 'wan');
        publicIp = wanIp;
      } else {
        const up = this.routers.get(r.upstream)!;
        wanIp = this.plugIntoLan(up, ns, 'wan');
        publicIp = up.publicIp;
      }
      // Inside: a bridge, so a LAN can hold several hosts (and routers behind a CGN).
      ip('-n', ns, 'link', 'add', 'lan', 'type', 'bridge');
      ip('-n', ns, 'link', 'set', 'lan', 'up');
      const isCgn = spec.routers.some((x) => x.upstream === r.name);
      const subnet = isCgn ? `100.64.${lanNo}` : `192.168.${lanNo}`;
      this.addr(ns, 'lan', `${subnet}.1/24`);
      nsExec(ns, 'nft', ['-f', '-'], routerRuleset(r.nat, 'wan', r.extraInput, r.upnp === true));
      const router: Router = { name: r.name, ns, ip: wanIp, nat: r.nat, wanIp, lanIp: `${subnet}.1`, publicIp, ...(r.upstream !== undefined ? { router: r.upstream } : {}) };
      this.routers.set(r.name, router);
      // Without miniupnpd the router is a plain cone NAT (tests that need mappings check hasUpnp()).
      if (r.upnp === true && hasUpnp()) this.startUpnp(router, `${subnet}.0/24`);
      for (const h of r.hosts ?? []) {
        const hns = this.addNs(h);
        this.hosts.set(h, { name: h, ns: hns, ip: this.plugIntoLan(router, hns, 'eth0'), router: r.name });
      }
    }
  }

  private lanPorts = new Map<string, number>();

  /** Connects namespace `ns` (interface `dev`) to `router`'s LAN bridge; returns its address there. */
  private plugIntoLan(router: Router, ns: string, dev: string): string {
    const port = (this.lanPorts.get(router.name) ?? 0) + 1;
    this.lanPorts.set(router.name, port);
    this.link(ns, dev, router.ns, `l${port}`);
    ip('-n', router.ns, 'link', 'set', `l${port}`, 'master', 'lan');
    const addr = `${router.lanIp.replace(/\.1$/, '')}.${port + 1}`;
    this.addr(ns, dev, `${addr}/24`);
    ip('-n', ns, 'route', 'add', 'default', 'via', router.lanIp);
    return addr;
  }

  private tmp: string | undefined;
  private readonly daemonLogs = new Map<string, string[]>();

  /** miniupnpd inside `router` (killed with its namespace); its output is kept for daemonLog(). */
  private startUpnp(router: Router, lanCidr: string): void {
    this.tmp ??= mkdtempSync(join(tmpdir(), `${this.prefix}-`));
    const conf = join(this.tmp, `${router.name}-miniupnpd.conf`);
    writeFileSync(conf, upnpConfig('wan', 'lan', lanCidr));
    const log: string[] = [];
    this.daemonLogs.set(router.name, log);
    // Its own pid file: the default one would stop a second network's miniupnpd ("already running").
    const pid = join(this.tmp, `${router.name}-miniupnpd.pid`);
    const p = spawn('ip', ['netns', 'exec', router.ns, 'miniupnpd', '-f', conf, '-P', pid, '-d'], { stdio: ['ignore', 'pipe', 'pipe'] });
    p.on('error', (err) => log.push(`spawn failed: ${err.message}`));
    for (const s of [p.stdout, p.stderr]) s.on('data', (d: Buffer) => log.push(...d.toString().split('\n').filter((l) => l !== '')));
  }

  /** Resolves once miniupnpd in `router` answers NAT-PMP (it prints that it listens). */
  async upnpReady(router: string, timeoutMs = 30_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!this.daemonLog(router).some((l) => /Listening for NAT-PMP/.test(l))) {
      if (Date.now() > end) throw new Error(`miniupnpd in ${router} not ready within ${timeoutMs} ms:\n${this.daemonLog(router).join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** What miniupnpd in `router` printed so far. */
  daemonLog(router: string): string[] {
    return this.daemonLogs.get(router) ?? [];
  }

  host(name: string): Host {
    const h = this.hosts.get(name) ?? this.routers.get(name);
    if (h === undefined) throw new Error(`no host ${name} in this network`);
    return h;
  }

  /** The address others on the Internet see `name` connect from. */
  publicIpOf(name: string): string {
    const h = this.host(name);
    return h.router === undefined ? h.ip : this.routers.get(h.router)!.publicIp;
  }

  /** Runs a short command inside host `name`, returns its stdout. */
  exec(name: string, cmd: string, args: string[], input?: string): string {
    return nsExec(this.host(name).ns, cmd, args, input);
  }

  /**
   * `node <script> <args…>` inside host `name` (a .ts script goes through
   * bin/run-ts.js). The handle reads its output; destroy() kills it.
   */
  spawnIn(name: string, script: string, args: string[] = [], io: Omit<SpawnIo, 'netns'> = {}): ProcessHandle {
    const argv = script.endsWith('.ts') ? [resolve(ROOT, 'bin/run-ts.js'), resolve(ROOT, script), ...args] : [resolve(ROOT, script), ...args];
    return this.track(spawnNode(`${script} @${name}`, argv, { ...io, netns: this.host(name).ns }));
  }

  /**
   * A Unix socket in this network's temp dir that leads to `port` on host
   * `name`'s loopback (testbed/nat/bridge.ts): how the test process, outside the
   * namespaces, reaches a service inside, e.g. undici's
   * `new Agent({ connect: { socketPath } })` for the manager's HTTP API.
   */
  async bridge(name: string, port: number, host = '127.0.0.1'): Promise<string> {
    this.tmp ??= mkdtempSync(join(tmpdir(), `${this.prefix}-`));
    const path = join(this.tmp, `${name}-${port}.sock`);
    await waitForLine(this.spawnIn(name, 'testbed/nat/bridge.ts', [path, String(port), host]), /"bridge"/);
    return path;
  }

  /** SpawnIo that puts a volcrawl executable (startManagerProcess, startVolunteerProcess …) inside host `name`. */
  io(name: string, io: SpawnIo = {}): SpawnIo {
    return { ...io, netns: this.host(name).ns, onSpawn: (h) => { this.track(h); io.onSpawn?.(h); } };
  }

  private track(h: ProcessHandle): ProcessHandle {
    this.children.add(h);
    void h.exited.then(() => this.children.delete(h));
    return h;
  }

  /** Stops every process started here (SIGTERM, then SIGKILL after `graceMs`) and deletes the namespaces. */
  async destroy(graceMs = 5000): Promise<void> {
    await Promise.all([...this.children].map((h) => h.stop(graceMs)));
    this.destroySync();
  }

  /** Kills whatever still runs inside and deletes every namespace; safe to call twice. */
  destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.unhook();
    for (const ns of [...this.namespaces].reverse()) deleteNamespace(ns);
    if (this.tmp !== undefined) rmSync(this.tmp, { recursive: true, force: true });
  }

  /** Namespaces of this network that still exist (empty after destroy). */
  liveNamespaces(): string[] {
    const all = new Set(listNamespaces());
    return this.namespaces.filter((ns) => all.has(ns));
  }
}
