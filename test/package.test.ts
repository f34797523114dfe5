// The package as a user installs it: `npm pack`, `npm install -g --prefix
// <empty dir> <tarball>`, then the three executables from that prefix — on this
// machine's Node and on every Node binary listed in VOLCRAWL_TEST_NODES
// (colon-separated; .ci/run adds Node 22 and 24). The build under test is the
// one the global setup made fresh, so the pack skips its own `prepare` (which
// would delete dist/ under the other test files' feet).
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(join(tmpdir(), 'volcrawl-pack-'));
const prefix = join(dir, 'prefix');
/** Any valid peer id will do: the node only runs orders this peer signs. */
const MANAGER = '12D3KooWPjVcaCmQJiYib6Q5fkXx1HmJ6ywdeQiqNK9ojJXwZbjp';
const nodes = [process.execPath, ...(process.env.VOLCRAWL_TEST_NODES ?? '').split(delimiter).filter((p) => p !== '')];

/** The environment without what `npm test` exports for its own run (npm_config_*,
 * npm_package_*…), which would steer the nested npm commands. */
function cleanEnv(extraPath?: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  if (extraPath !== undefined) env.PATH = `${extraPath}${delimiter}${env.PATH ?? ''}`;
  return env;
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {}): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd: opts.cwd ?? dir, env: opts.env ?? cleanEnv(), encoding: 'utf8', timeout: opts.timeout ?? 120_000 });
}

function explain(r: SpawnSyncReturns<string>): string {
  return `exit ${String(r.status)} ${r.error !== undefined ? String(r.error) : ''}\n${r.stdout}\n${r.stderr}`;
}

let files: string[] = [];

describe('the packed tarball', () => {
  beforeAll(() => {
    const pack = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT });
    expect(pack.status, explain(pack)).toBe(0);
    const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
    files = info!.files.map((f) => f.path);
    const install = run('npm', ['install', '-g', '--prefix', prefix, join(dir, info!.filename), '--prefer-offline', '--no-audit', '--no-fund'], { timeout: 600_000 });
    expect(install.status, explain(install)).toBe(0);
  }, 660_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the compiled executables, the dashboard files and the latency dataset, and no sources or tests', () => {
    for (const f of ['dist/bin/volunteer-crawler.js', 'dist/src/manager/cli.js', 'dist/sim/cli.js', 'dist/data/latency/planetlab490/PlanetLabData_1', 'dist/docs/volunteer.md']) {
      expect(files).toContain(f);
    }
    expect(files.some((f) => /^dist\/src\/manager\/dashboard\/static\/.+\.html$/.test(f))).toBe(true);
    expect(files.filter((f) => f.endsWith('.ts') || /^(src|test|testbed|bench)\//.test(f) || f.startsWith('dist/testbed/'))).toEqual([]);
  });

  for (const node of nodes) {
    describe(`on ${node}`, () => {
      // The executables start with `#!/usr/bin/env node`: this Node comes first on PATH.
      const env = cleanEnv(dirname(node));
      const bin = (name: string) => join(prefix, 'bin', name);

      it('runs the Node it was given', () => {
        const v = run('node', ['--version'], { env });
        expect(v.stdout.trim()).toBe(run(node, ['--version']).stdout.trim());
      });

      it('volunteer-crawler --help and dht-manager --help work from the prefix', () => {
        const v = run(bin('volunteer-crawler'), ['--help'], { env });
        expect(v.status, explain(v)).toBe(0);
        expect(v.stdout).toMatch(/join \[options\]/);
        const m = run(bin('dht-manager'), ['--help'], { env });
        expect(m.status, explain(m)).toBe(0);
        expect(m.stdout).toMatch(/serve \[options\]/);
      });

      it('volunteer-crawler join starts a node, and SIGTERM stops it cleanly', async () => {
        const data = mkdtempSync(join(dir, 'volunteer-'));
        const child = spawn(bin('volunteer-crawler'), ['join', '--first', '--manager', MANAGER, '--lan', '--listen', '/ip4/127.0.0.1/tcp/0', '--no-status', '--data-dir', data], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        const started = await Promise.race([
          new Promise<boolean>((resolve) => child.stdout.on('data', () => out.includes('"node started"') && resolve(true))),
          exited.then(() => false),
        ]);
        expect(started, out).toBe(true);
        child.kill('SIGTERM');
        expect(await exited, out).toBe(0);
        expect(out).toMatch(/"msg":"stopped"/);
      }, 60_000);

      it('sim run --quick --scenario rec works from the prefix (the shipped dataset is found)', () => {
        const s = run(bin('sim'), ['run', '--quick', '--scenario', 'rec'], { env, timeout: 300_000 });
        expect(s.status, explain(s)).toBe(0);
        expect(s.stdout).toMatch(/IIR/);
      }, 320_000);
    });
  }
});
