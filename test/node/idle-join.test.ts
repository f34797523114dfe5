// What an idle `volunteer-crawler join` keeps resident: it must not load the
// crawler (HTTP client, HTML parser, robots.txt, WARC writer: loaded on the
// first task, src/node/lazy-runner.ts) nor ask V8 for ICU's locale data
// (Intl, localeCompare: several MB that stay resident) before it has work.
// A real process, the compiled executable started through its own first line
// (as npm's link runs it: that line sets glibc's arenas and V8's young
// generation, src/node/runtime-flags.ts), with a preload that records the
// settings it got, every module it loads, every ICU service it asks for
// and every V8 flag it sets from inside (test/fixtures/trace-idle.mjs); the esbuild metafile the build writes says
// which sources each loaded chunk holds. Nothing is timed: the process is
// asked for its status (the owner's verb, which reads the local time and the
// transfer ledger) once its control socket is up, then stopped.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { VOLUNTEER_NODE_ENV, VOLUNTEER_NODE_FLAGS, VOLUNTEER_V8_RUNTIME_FLAGS, volunteerShebang } from '../../src/node/runtime-flags.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/volunteer-crawler.js');
const EXECUTABLE = join(ROOT, 'dist/bin/volunteer-crawler.js');
const PRELOAD = join(ROOT, 'test/fixtures/trace-idle.mjs');
const MANAGER = '12D3KooWPjVcaCmQJiYib6Q5fkXx1HmJ6ywdeQiqNK9ojJXwZbjp';
/** Sources only the crawler needs (the lazy runner's import and what it alone pulls in). */
const CRAWLER_ONLY = [/^dist\/src\/crawler\/manager\.js$/, /^dist\/src\/crawler\/thread\.js$/, /^dist\/src\/crawler\/robots\.js$/, /^dist\/src\/crawler\/warc\/writer\.js$/, /^node_modules\/undici\//, /^node_modules\/htmlparser2\//];

const dir = mkdtempSync(join(tmpdir(), 'vc-idle-'));
let proc: ChildProcess | undefined;
afterAll(() => {
  if (proc !== undefined && proc.exitCode === null) proc.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const withoutArenas = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'MALLOC_ARENA_MAX'));

function run(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => execFile(process.execPath, [BIN, ...args], (err, _out, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr })));
}

describe('an idle volunteer-crawler join', () => {
  it("starts from an executable whose first line carries the volunteer's Node settings", () => {
    expect(readFileSync(EXECUTABLE, 'utf8').split('\n', 1)[0]).toBe(volunteerShebang());
  });

  it('loads none of the crawler and no ICU locale data before its first task', async () => {
    const trace = join(dir, 'trace.txt');
    const data = join(dir, 'data');
    const child = spawn(EXECUTABLE, ['join', '--first', '--manager', MANAGER, '--lan', '--listen', '/ip4/127.0.0.1/tcp/0', '--no-status', '--cpu-busy-above', '0', '--data-dir', data], {
      // `env` finds this test's node first on PATH; the preload comes through NODE_OPTIONS.
      env: { ...withoutArenas(), PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`, NODE_OPTIONS: `--import ${PRELOAD}`, VOLCRAWL_TRACE_FILE: trace },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc = child;
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    await new Promise<void>((ok, fail) => {
      const check = () => {
        if (out.includes('owner control ready')) ok();
        else if (child.exitCode !== null) fail(new Error(`join exited ${child.exitCode}:\n${out}`));
        else setTimeout(check, 50);
      };
      check();
    });
    const status = await run(['status', '--json', '--data-dir', data]);
    expect(status.code, status.stderr).toBe(0);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;

    const lines = readFileSync(trace, 'utf8').trim().split('\n');
    const node = JSON.parse(lines.find((l) => l.startsWith('node '))!.slice(5)) as { execArgv: string[]; MALLOC_ARENA_MAX: string | null };
    for (const f of VOLUNTEER_NODE_FLAGS) expect(node.execArgv).toContain(f);
    expect(node.MALLOC_ARENA_MAX).toBe(VOLUNTEER_NODE_ENV.MALLOC_ARENA_MAX);
    // Set from inside on purpose (runtime-flags.ts says why), before any of the bundle's chunks loads.
    const firstLoad = lines.findIndex((l) => l.startsWith('load file:') && l.includes('/dist/bin/chunks/commands-'));
    for (const f of VOLUNTEER_V8_RUNTIME_FLAGS) {
      const at = lines.indexOf(`v8flag ${f}`);
      expect(at, `${f} set`).toBeGreaterThanOrEqual(0);
      expect(at).toBeLessThan(firstLoad);
    }
    expect(lines.filter((l) => l.startsWith('icu ')), 'ICU services asked for').toEqual([]);
    const loaded = lines.filter((l) => l.startsWith('load file:')).map((l) => relative(ROOT, fileURLToPath(l.slice(5))));
    const meta = JSON.parse(readFileSync(join(ROOT, 'dist/volunteer-bundle.meta.json'), 'utf8')) as { outputs: Record<string, { inputs: Record<string, unknown> }> };
    const inputsOf = (outputs: string[]) => outputs.flatMap((o) => Object.keys(meta.outputs[o]?.inputs ?? {}));
    const chunks = Object.keys(meta.outputs).filter((o) => o.endsWith('.js'));
    const loadedChunks = loaded.filter((f) => chunks.includes(f));
    expect(loadedChunks).toContain('dist/bin/volunteer-crawler.js');
    // Not vacuous: every crawler-only source is in the bundle, in chunks the process did not load.
    const bundled = inputsOf(chunks);
    for (const re of CRAWLER_ONLY) expect(bundled.some((i) => re.test(i)), `${re} bundled`).toBe(true);
    const used = inputsOf(loadedChunks);
    expect(used.filter((i) => CRAWLER_ONLY.some((re) => re.test(i)))).toEqual([]);
    // …and none of them from node_modules outside the bundle either.
    expect(loaded.filter((f) => CRAWLER_ONLY.some((re) => re.test(f)))).toEqual([]);
  });
});
