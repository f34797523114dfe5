// The installed `dht-manager` (src/manager/dht-manager.sh, package.json's bin): it must
// start the CLI next to it through npm's links, with MALLOC_ARENA_MAX=2 unless the caller
// set a value, pass the arguments through untouched, and replace itself (exec) rather
// than leave a shell resident beside the manager. A stand-in `node` first on PATH
// reports its pid, the variable and its arguments; the real CLI is run by
// test/package.test.ts from an installed tarball.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const LAUNCHER = resolve(import.meta.dirname, '../../src/manager/dht-manager.sh');
const CLI = resolve(import.meta.dirname, '../../src/manager/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'volcrawl-launcher-'));
const fakeBin = join(dir, 'fake');
mkdirSync(fakeBin);
writeFileSync(join(fakeBin, 'node'), '#!/bin/sh\necho "pid=$$"\necho "arenas=${MALLOC_ARENA_MAX-unset}"\nfor a in "$@"; do echo "arg=$a"; done\n');
chmodSync(join(fakeBin, 'node'), 0o755);
// As npm installs it: <prefix>/bin/dht-manager → ../lib/… (relative), and a second,
// absolute link on the way, so both kinds are followed.
mkdirSync(join(dir, 'bin'));
mkdirSync(join(dir, 'lib'));
symlinkSync(LAUNCHER, join(dir, 'lib', 'dht-manager'));
symlinkSync('../lib/dht-manager', join(dir, 'bin', 'dht-manager'));

async function launch(args: string[], env: NodeJS.ProcessEnv): Promise<{ pid: number; lines: string[]; code: number | null }> {
  const child = spawn(join(dir, 'bin', 'dht-manager'), args, { env: { ...env, PATH: `${fakeBin}:${process.env.PATH ?? ''}` }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  return { pid: child.pid!, lines: out.trim().split('\n'), code };
}

const withoutArenas = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'MALLOC_ARENA_MAX'));

describe('the dht-manager launcher', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('execs node on the CLI beside it, in the same process, with MALLOC_ARENA_MAX=2 and the arguments as given', async () => {
    const r = await launch(['serve', '--data-dir', 'a dir with spaces', ''], withoutArenas());
    expect(r.code).toBe(0);
    expect(r.lines).toEqual([`pid=${r.pid}`, 'arenas=2', `arg=${CLI}`, 'arg=serve', 'arg=--data-dir', 'arg=a dir with spaces', 'arg=']);
  });

  it("keeps the caller's MALLOC_ARENA_MAX", async () => {
    const r = await launch(['--help'], { ...withoutArenas(), MALLOC_ARENA_MAX: '4' });
    expect(r.lines).toContain('arenas=4');
  });
});
