// Linux network namespaces for the NAT test network: the `ip` and `nft`
// commands, namespace names that say who owns them, and the clean-up that runs
// however the owner ends (normal exit, exception, signal; a SIGKILLed owner's
// namespaces are swept by the next owner on this machine).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Every namespace this harness makes starts with this; nothing else on the machine may use it. */
export const NS_PREFIX = 'vcn-';
/** `vcn-<owner pid>x<net number>-<role>`: the owner's pid lets the sweeper find orphans. */
const NS_NAME = /^vcn-(\d+)x(\d+)-/;

/** Runs a command, returns its stdout; throws with its stderr when it fails. */
export function run(cmd: string, args: string[], input?: string): string {
  const r = spawnSync(cmd, args, { input, encoding: 'utf8', timeout: 30_000 });
  if (r.error !== undefined) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${String(r.status ?? r.signal)}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** `ip <args>` */
export const ip = (...args: string[]): string => run('ip', args);
/** `ip netns exec <ns> <cmd…>` */
export const nsExec = (ns: string, cmd: string, args: string[], input?: string): string => run('ip', ['netns', 'exec', ns, cmd, ...args], input);

export function listNamespaces(): string[] {
  return ip('netns', 'list')
    .split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter((n) => n.length > 0);
}

/** Kills every process inside `ns` (they would keep the namespace alive after `ip netns del`), then deletes it. */
export function deleteNamespace(ns: string): void {
  try {
    for (const pid of ip('netns', 'pids', ns).split('\n').filter((p) => /^\d+$/.test(p))) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  } catch {
    // namespace already gone
  }
  spawnSync('ip', ['netns', 'del', ns], { timeout: 30_000 });
}

function alive(pid: number): boolean {
  return existsSync(`/proc/${pid}`);
}

/** Deletes the namespaces of owners that no longer run (a test SIGKILLed mid-run). Returns what it deleted. */
export function sweepOrphans(): string[] {
  const swept: string[] = [];
  for (const ns of listNamespaces()) {
    const m = NS_NAME.exec(ns);
    if (m === null || alive(Number(m[1]))) continue;
    deleteNamespace(ns);
    swept.push(ns);
  }
  return swept;
}

/** Why namespaces cannot be used here, or null when they can (tried, not guessed). */
export function namespaceSupport(): string | null {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'network namespaces need root';
  for (const tool of ['ip', 'nft']) {
    const r = spawnSync(tool, ['-V'], { encoding: 'utf8' });
    if (r.error !== undefined) return `\`${tool}\` is missing (${tool === 'nft' ? 'apt-get install -y nftables' : 'apt-get install -y iproute2'})`;
  }
  const probe = `${NS_PREFIX}${process.pid}x0-probe`;
  try {
    ip('netns', 'add', probe);
    nsExec(probe, 'nft', ['add', 'table', 'ip', 'probe']);
    return null;
  } catch (err) {
    return `the kernel refused a network namespace with nftables: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    deleteNamespace(probe);
  }
}

type Cleanup = () => void;
const cleanups = new Set<Cleanup>();
let hooked = false;

/**
 * Runs `fn` (synchronously: it must work inside an 'exit' handler) when this
 * process exits or is stopped by SIGINT/SIGTERM/SIGHUP, unless the returned
 * function is called first.
 */
export function onProcessEnd(fn: Cleanup): () => void {
  cleanups.add(fn);
  if (!hooked) {
    hooked = true;
    const runAll = (): void => {
      for (const f of [...cleanups]) {
        cleanups.delete(f);
        try {
          f();
        } catch {
          // best effort: the sweeper gets the rest
        }
      }
    };
    process.on('exit', runAll);
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.on(sig, () => {
        runAll();
        // We were the reason the signal no longer ends the process: end it as it would have.
        if (process.listenerCount(sig) === 1) {
          process.removeAllListeners(sig);
          process.kill(process.pid, sig);
        }
      });
    }
  }
  return () => {
    cleanups.delete(fn);
  };
}

/** A network number unique within this process, for namespace names. */
let nets = 0;
export function newNetPrefix(): string {
  nets += 1;
  return `${NS_PREFIX}${process.pid}x${nets}`;
}

export function nsSysctl(ns: string, key: string, value: string): void {
  nsExec(ns, 'sysctl', ['-qw', `${key}=${value}`]);
}
