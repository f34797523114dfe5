// The shared shape of the three executables: --help everywhere, usage errors
// print the help and exit 2, and an uncaught failure prints one clear line.
import { Command, InvalidArgumentError } from 'commander';
import { multiaddr } from '@multiformats/multiaddr';

export function createProgram(name: string, description: string): Command {
  const program = new Command(name)
    .description(description)
    .showHelpAfterError()
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
  return program;
}

/** Parses argv and runs the chosen verb; prints the help when no verb is given. */
export async function runProgram(program: Command): Promise<void> {
  if (program.commands.length > 0 && process.argv.length <= 2) {
    program.outputHelp();
    process.exit(2);
  }
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    console.error(`${program.name()}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}

/** Option parser: a decimal integer in [min, max]. */
export function intArg(name: string, min: number, max: number): (v: string) => number {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`${name} must be an integer in ${min}..${max}`);
    }
    return n;
  };
}

/** Option parser: a decimal number in [min, max]. */
export function numberArg(name: string, min: number, max: number): (v: string) => number {
  return (v: string): number => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a number in ${min}..${max}`);
    return n;
  };
}

/** Option parser: a positive byte count with an optional k/M/G (decimal) suffix, e.g. 500k, 1G. */
export function bytesArg(name: string, example: string): (v: string) => number {
  return (v: string): number => {
    const m = /^(\d+(?:\.\d+)?)\s*([kKmMgG]?)$/.exec(v.trim());
    if (!m) throw new InvalidArgumentError(`${name}: expected ${example}`);
    const n = Math.floor(Number(m[1]) * ({ '': 1, k: 1e3, m: 1e6, g: 1e9 } as Record<string, number>)[(m[2] ?? '').toLowerCase()]!);
    if (!(n > 0)) throw new InvalidArgumentError(`${name} must be positive`);
    return n;
  };
}

/** Option parser for a repeatable multiaddr flag. */
export function multiaddrArg(v: string, prev: string[] = []): string[] {
  try {
    multiaddr(v);
  } catch (err) {
    throw new InvalidArgumentError(`not a multiaddr: ${(err as Error).message}`);
  }
  return [...prev, v];
}

/** Resolves once `stop` has run after the first SIGINT or SIGTERM; a second
 * signal while stopping exits at once, for an operator who cannot wait. */
export function untilSignal(
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void },
  stop: (signal: string) => Promise<void>,
): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (signal: string) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      log.info({ signal }, 'shutting down');
      void stop(signal).then(resolve, resolve);
    };
    process.on('SIGINT', () => onSignal('SIGINT'));
    process.on('SIGTERM', () => onSignal('SIGTERM'));
  });
}
