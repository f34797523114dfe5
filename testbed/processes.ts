// Child processes as a user runs them: `dht-manager serve` and `volunteer-crawler
// join`, started through bin/ exactly as the README says. Shared by the demo and
// test/manager/processes.test.ts. A handle learns what its process printed (peer
// id, addresses, API URL) and can show the tail of its output. Output goes to a
// pipe (tests: nothing left on disk) or is appended to a file (the demo: a long
// run writes megabytes nobody reads in-process, and the file outlives the run).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { VOLUNTEER_NODE_ENV, VOLUNTEER_NODE_FLAGS } from '../src/node/runtime-flags.js';

const ROOT = resolve(import.meta.dirname, '..');
const START_TIMEOUT_MS = 90_000;
const TAIL_LINES = 200;
/** Bytes read from the end of a log file to find its last TAIL_LINES lines. */
const TAIL_BYTES = 64 * 1024;
/** How often a log file is read while someone waits for a line in it. */
const FOLLOW_MS = 100;

export interface SpawnIo {
  /** Append stdout and stderr to this file instead of piping them to this process. */
  logFile?: string;
  /** Own process group: a terminal's Ctrl-C reaches only this process, which then stops the child in order. */
  detached?: boolean;
  /** Called at spawn, before the process is ready, so the caller can stop one that never gets there. */
  onSpawn?: (h: ProcessHandle) => void;
  /** Run inside this Linux network namespace (`ip netns exec <name> node …`; the NAT test network). */
  netns?: string;
  /** Variables added to this process's environment (e.g. a test plugin for a misbehaving volunteer). */
  env?: Record<string, string>;
}

type LineListener = (line: string) => void;

/** Cuts byte chunks into lines, UTF-8 safe, holding back the partial last line. */
class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private buf = '';
  push(chunk: Buffer): string[] {
    this.buf += this.decoder.write(chunk);
    const lines = this.buf.split('\n');
    this.buf = lines.pop()!;
    return lines;
  }
}

interface Output {
  /** Calls `onLine` for each line written from now on, until the returned function is called. */
  follow(onLine: LineListener): () => void;
  /** The last `n` (≤ TAIL_LINES) lines written since the spawn. */
  tail(n: number): string[];
}

/** stdout and stderr piped here: always read (a full pipe would block the child), tail kept in memory. */
class PipeOutput implements Output {
  private readonly listeners = new Set<LineListener>();
  private readonly last: string[] = [];

  constructor(streams: (Readable | null)[]) {
    for (const stream of streams) {
      const split = new LineSplitter();
      stream?.on('data', (d: Buffer) => {
        for (const l of split.push(d)) {
          this.last.push(l);
          if (this.last.length > TAIL_LINES) this.last.shift();
          for (const f of this.listeners) f(l);
        }
      });
    }
  }

  follow(onLine: LineListener): () => void {
    this.listeners.add(onLine);
    return () => this.listeners.delete(onLine);
  }

  tail(n: number): string[] {
    return this.last.slice(-n);
  }
}

/** stdout and stderr appended to a file; read from `start` (the size at spawn: a reused file holds older runs). */
class FileOutput implements Output {
  private readonly listeners = new Set<LineListener>();
  private readonly split = new LineSplitter();
  private readPos: number;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    readonly path: string,
    private readonly start: number,
  ) {
    this.readPos = start;
  }

  follow(onLine: LineListener): () => void {
    this.listeners.add(onLine);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.poll(), FOLLOW_MS);
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(onLine);
      if (this.listeners.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  private poll(): void {
    const fresh = this.readFrom(this.readPos);
    this.readPos += fresh.length;
    for (const l of this.split.push(fresh)) for (const f of this.listeners) f(l);
  }

  tail(n: number): string[] {
    const end = this.size();
    const from = Math.max(this.start, end - TAIL_BYTES);
    const lines = this.readFrom(from).toString('utf8').split('\n');
    if (from > this.start) lines.shift(); // cut mid-line
    if (lines[lines.length - 1] === '') lines.pop();
    return lines.slice(-n);
  }

  private size(): number {
    const fd = openSync(this.path, 'r');
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  }

  private readFrom(pos: number): Buffer {
    const fd = openSync(this.path, 'r');
    try {
      const buf = Buffer.alloc(Math.max(0, fstatSync(fd).size - pos));
      const n = readSync(fd, buf, 0, buf.length, pos);
      return buf.subarray(0, n);
    } finally {
      closeSync(fd);
    }
  }
}

export class ProcessHandle {
  readonly exited: Promise<void>;

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
    private readonly out: Output,
    /** Where the output goes, when it is a file. */
    readonly logFile: string | null,
  ) {
    this.exited = new Promise((r) => proc.once('exit', () => r()));
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** "exit code 1" / "signal SIGKILL" once exited. */
  get exitStatus(): string {
    return this.proc.signalCode !== null ? `signal ${this.proc.signalCode}` : `exit code ${String(this.proc.exitCode)}`;
  }

  /** Calls `onLine` for each line the process writes to stdout or stderr, until the returned function is called. */
  follow(onLine: (line: string) => void): () => void {
    return this.out.follow(onLine);
  }

  output(lines = TAIL_LINES): string {
    return `--- last output of ${this.name}${this.logFile !== null ? ` (${this.logFile})` : ''} ---\n${this.out.tail(lines).join('\n')}`;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.running) this.proc.kill(signal);
    await this.exited;
  }

  /** SIGTERM (the process leaves or shuts down cleanly), SIGKILL if it is still there after `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    const force = setTimeout(() => void this.kill('SIGKILL'), graceMs);
    await this.kill('SIGTERM');
    clearTimeout(force);
  }
}

function spawnBin(name: string, bin: string, args: string[], io: SpawnIo, node: { flags?: readonly string[]; env?: Readonly<Record<string, string>> } = {}): ProcessHandle {
  return spawnNode(name, [...(node.flags ?? []), resolve(ROOT, 'bin', bin), ...args], node.env === undefined ? io : { ...io, env: { ...node.env, ...io.env } });
}

/** `node <argv…>` (this Node binary, cwd the repository), in `io.netns` when given. */
export function spawnNode(name: string, argv: string[], io: SpawnIo = {}): ProcessHandle {
  const [cmd, cmdArgs] = io.netns === undefined ? [process.execPath, argv] : ['ip', ['netns', 'exec', io.netns, process.execPath, ...argv]];
  const detached = io.detached ?? false;
  const env = io.env === undefined ? process.env : { ...process.env, ...io.env };
  let h: ProcessHandle;
  if (io.logFile === undefined) {
    const proc = spawn(cmd, cmdArgs, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached, env });
    h = new ProcessHandle(name, proc, new PipeOutput([proc.stdout, proc.stderr]), null);
  } else {
    mkdirSync(dirname(io.logFile), { recursive: true });
    const fd = openSync(io.logFile, 'a');
    try {
      const start = fstatSync(fd).size;
      const proc = spawn(cmd, cmdArgs, { cwd: ROOT, stdio: ['ignore', fd, fd], detached, env });
      h = new ProcessHandle(name, proc, new FileOutput(io.logFile, start), io.logFile);
    } finally {
      closeSync(fd); // the child has its own copy
    }
  }
  io.onSpawn?.(h);
  return h;
}

/** Appends `defaults` (flag, value) that `args` does not already set. */
function withDefaults(args: string[], defaults: [string, string][]): string[] {
  return [...args, ...defaults.filter(([flag]) => !args.includes(flag)).flat()];
}

/**
 * Resolves with what `parse` extracts once it returns a value; rejects if the
 * process exits first, or kills it and rejects if that takes too long.
 */
function startedWith<T>(h: ProcessHandle, parse: (line: string) => T | undefined): Promise<T> {
  return new Promise<T>((done, fail) => {
    let unfollow = (): void => undefined;
    const timer = setTimeout(() => {
      unfollow();
      const output = h.output();
      void h.kill('SIGKILL');
      fail(new Error(`${h.name} did not start within ${START_TIMEOUT_MS} ms (killed)\n${output}`));
    }, START_TIMEOUT_MS);
    unfollow = h.follow((line) => {
      const v = parse(line);
      if (v !== undefined) {
        clearTimeout(timer);
        unfollow();
        done(v);
      }
    });
    void h.exited.then(() => {
      clearTimeout(timer);
      unfollow();
      fail(new Error(`${h.name} exited (${h.exitStatus}) before it was ready\n${h.output()}`));
    });
  });
}

export interface ManagerProcess extends ProcessHandle {
  peerId: string;
  /** libp2p addresses with /p2p/<peerId>. */
  addrs: string[];
  api: string;
  dashboard: string;
}

/**
 * `dht-manager serve --data-dir <dir> --lan …` on loopback (--listen, --http-port
 * and --log-level default to 127.0.0.1, any port, warn unless `extraArgs` set
 * them); resolves once it prints the join command.
 */
export async function startManagerProcess(dataDir: string, extraArgs: string[] = [], io: SpawnIo = {}, o: { lan?: boolean } = {}): Promise<ManagerProcess> {
  const args = withDefaults(['serve', '--data-dir', dataDir, ...(o.lan === false ? [] : ['--lan']), ...extraArgs], [
    ['--listen', '/ip4/127.0.0.1/tcp/0'],
    ['--http-port', '0'],
    ['--log-level', 'warn'],
  ]);
  const h = spawnBin('dht-manager serve', 'dht-manager.js', args, io);
  const seen: { peerId?: string; addrs?: string[]; api?: string; dashboard?: string } = {};
  const ready = await startedWith(h, (line) => {
    let m: RegExpExecArray | null;
    if ((m = /^dht-manager: peer (\S+)/.exec(line))) seen.peerId = m[1]!;
    else if ((m = /^\s+listening on (.+)$/.exec(line))) seen.addrs = m[1]!.trim().split(/\s+/);
    else if ((m = /^\s+operator API (http:\/\/\S+)/.exec(line))) seen.api = m[1]!;
    else if ((m = /^\s+dashboard (http:\/\/\S+)/.exec(line))) seen.dashboard = m[1]!;
    else if (/volunteers join with/.test(line) && seen.peerId && seen.addrs && seen.api && seen.dashboard) return { peerId: seen.peerId, addrs: seen.addrs, api: seen.api, dashboard: seen.dashboard };
    return undefined;
  });
  const addrs = ready.addrs.map((a) => (a.includes('/p2p/') ? a : `${a}/p2p/${ready.peerId}`));
  return Object.assign(h, { ...ready, addrs });
}

export interface VolunteerProcess extends ProcessHandle {
  peerId: string;
}

/**
 * `volunteer-crawler join <manager> --manager <id> --allow-private --lan …`
 * (--log-level info unless `extraArgs` sets it); returns at once.
 */
export function spawnVolunteerProcess(name: string, manager: { peerId: string; addrs: string[] }, dataDir: string, extraArgs: string[] = [], io: SpawnIo = {}, o: { lan?: boolean } = {}): ProcessHandle {
  // lan: false (the NAT test network) runs the NAT stack and listens only where extraArgs say.
  const base = o.lan === false ? [] : ['--lan', '--listen', '/ip4/127.0.0.1/tcp/0'];
  const args = withDefaults(['join', ...manager.addrs, '--manager', manager.peerId, '--allow-private', ...base, '--data-dir', dataDir, '--no-status', ...extraArgs], [
    ['--log-level', 'info'],
    // Manager, volunteers and test web share this machine: their CPU use is not the owner's other programs.
    ['--cpu-busy-above', '0'],
  ]);
  // With the installed executable's Node settings (its first line: src/node/runtime-flags.ts).
  return spawnBin(name, 'volunteer-crawler.js', args, io, { flags: VOLUNTEER_NODE_FLAGS, env: VOLUNTEER_NODE_ENV });
}

/** spawnVolunteerProcess, resolving once its node is up (needs --log-level info or lower). */
export async function startVolunteerProcess(name: string, manager: { peerId: string; addrs: string[] }, dataDir: string, extraArgs: string[] = [], io: SpawnIo = {}, o: { lan?: boolean } = {}): Promise<VolunteerProcess> {
  const h = spawnVolunteerProcess(name, manager, dataDir, extraArgs, io, o);
  const peerId = await startedWith(h, (line) => {
    if (!line.startsWith('{')) return undefined;
    try {
      const rec = JSON.parse(line) as { msg?: string; peerId?: string };
      return rec.msg === 'node started' ? rec.peerId : undefined;
    } catch {
      return undefined;
    }
  });
  return Object.assign(h, { peerId });
}
