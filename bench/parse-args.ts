// node:util's parseArgs for the benches' command lines, with a user's mistake
// (an unknown flag, a value that looks like a flag such as `--seed -1`) printed
// as one line and exit code 2 instead of a stack trace.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export function parseArgsOrExit<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(2);
  }
}
