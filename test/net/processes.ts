// The system as a user runs it: `dht-manager serve` and `volunteer-crawler join`
// as child processes on loopback, started through bin/ exactly as the README
// says. Each handle learns what the process printed (peer id, addresses, API
// URL) and keeps the tail of its output so a failing test can show it.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const START_TIMEOUT_MS = 90_000;
const TAIL_LINES = 200;

export class ProcessHandle {
  readonly exited: Promise<void>;
  private readonly tail: string[] = [];

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    this.exited = new Promise((r) => proc.once('exit', () => r()));
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Calls `onLine` for each line the process writes to stdout or stderr. */
  watch(onLine: (line: string) => void): void {
    for (const stream of [this.proc.stdout, this.proc.stderr]) {
      let buf = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (d: string) => {
        buf += d;
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) {
          this.tail.push(l);
          if (this.tail.length > TAIL_LINES) this.tail.shift();
          onLine(l);
        }
      });
    }
  }

  output(): string {
    return `--- last output of ${this.name} ---\n${this.tail.join('\n')}`;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.running) this.proc.kill(signal);
    await this.exited;
  }
}

function spawnBin(bin: string, args: string[]): ChildProcess {
  return spawn(process.execPath, [resolve(ROOT, 'bin', bin), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Resolves with what `parse` extracts once it returns a value; rejects if the process exits first. */
function startedWith<T>(h: ProcessHandle, parse: (line: string) => T | undefined): Promise<T> {
  return new Promise<T>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${h.name} did not start within ${START_TIMEOUT_MS} ms\n${h.output()}`)), START_TIMEOUT_MS);
    h.watch((line) => {
      const v = parse(line);
      if (v !== undefined) {
        clearTimeout(timer);
        done(v);
      }
    });
    void h.exited.then(() => {
      clearTimeout(timer);
      fail(new Error(`${h.name} exited before it was ready\n${h.output()}`));
    });
  });
}

export interface ManagerProcess extends ProcessHandle {
  peerId: string;
  /** libp2p addresses with /p2p/<peerId>. */
  addrs: string[];
  api: string;
}

/** `dht-manager serve --data-dir <dir> …` on loopback; resolves once it prints the join command. */
export async function startManagerProcess(dataDir: string, extraArgs: string[] = []): Promise<ManagerProcess> {
  const args = ['serve', '--data-dir', dataDir, '--http-port', '0', '--lan', '--log-level', 'warn', ...extraArgs];
  if (!extraArgs.includes('--listen')) args.push('--listen', '/ip4/127.0.0.1/tcp/0');
  const h = new ProcessHandle('dht-manager serve', spawnBin('dht-manager.js', args));
  const seen: { peerId?: string; addrs?: string[]; api?: string } = {};
  const ready = await startedWith(h, (line) => {
    let m: RegExpExecArray | null;
    if ((m = /^dht-manager: peer (\S+)/.exec(line))) seen.peerId = m[1]!;
    else if ((m = /^\s+listening on (.+)$/.exec(line))) seen.addrs = m[1]!.trim().split(/\s+/);
    else if ((m = /^\s+operator API (http:\/\/\S+)/.exec(line))) seen.api = m[1]!;
    else if (/volunteers join with/.test(line) && seen.peerId && seen.addrs && seen.api) return { peerId: seen.peerId, addrs: seen.addrs, api: seen.api };
    return undefined;
  });
  const addrs = ready.addrs.map((a) => (a.includes('/p2p/') ? a : `${a}/p2p/${ready.peerId}`));
  return Object.assign(h, { peerId: ready.peerId, addrs, api: ready.api });
}

export interface VolunteerProcess extends ProcessHandle {
  peerId: string;
}

/** `volunteer-crawler join <manager> --manager <id> --allow-private --lan …`; resolves once its node is up. */
export async function startVolunteerProcess(name: string, manager: { peerId: string; addrs: string[] }, dataDir: string, extraArgs: string[] = []): Promise<VolunteerProcess> {
  const args = ['join', ...manager.addrs, '--manager', manager.peerId, '--allow-private', '--lan', '--data-dir', dataDir, '--listen', '/ip4/127.0.0.1/tcp/0', '--no-status', '--log-level', 'info', ...extraArgs];
  const h = new ProcessHandle(name, spawnBin('volunteer-crawler.js', args));
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
