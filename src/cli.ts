// The shared shape of the three executables: --help everywhere, usage errors
// print the help and exit 2, and an uncaught failure prints one clear line.
import { Command } from 'commander';

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
