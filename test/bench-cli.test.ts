// The benchmarks' command lines as a user types them: a mistake is one clear
// line on stderr and exit code 2, never a stack trace, and nothing is started.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

function bench(file: string, args: string[]) {
  return spawnSync(process.execPath, ['bin/run-ts.js', `bench/${file}`, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
}

describe('bench command lines refuse bad input plainly', () => {
  it.each([
    ['integrity.ts', ['--seed', '-1'], /--seed.*ambiguous/],
    ['integrity.ts', ['--bogus'], /Unknown option '--bogus'/],
    ['integrity.ts', ['--join-after=-5'], /--join-after must be an integer in \[0, 36000\], got -5/],
    ['integrity.ts', ['--late-honest', '9'], /--late-honest must be an integer in \[0, 4\], got 9/],
    ['manager.ts', ['--channels', '-3'], /--channels.*ambiguous/],
    ['nat-check.ts', ['--wait', '0'], /--wait: a positive number of seconds, got 0/],
    ['nat-check.ts', ['--tasks', 'x'], /--tasks: an integer in 0..10000, got x/],
  ])('%s %s', (file, args, message) => {
    const r = bench(file, args);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stdout).toBe('');
  });
});
