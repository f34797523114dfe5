// The shape of the source tree, checked on every run (no dependency: the
// imports are read from the files): src/ and sim/ never import from test/,
// testbed/, demo/ or bench/; no import cycles in src/ and sim/ (type imports
// count: they tie modules as much); the manager's layers import only downward
// (domain ← data ← services ← API); only the key table spells database keys;
// no file in src/manager is longer than 400 lines.
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

function files(dir: string, ext = /\.ts$/): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p, ext));
    else if (ext.test(e.name)) out.push(p);
  }
  return out;
}

/** Relative import specifiers of a file, resolved to root-relative .ts paths. */
function imports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"`;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  return specs
    .filter((s) => s.startsWith('.'))
    .map((s) => {
      const p = relative(ROOT, resolve(ROOT, dirname(file), s));
      const ts = p.replace(/\.js$/, '.ts');
      return existsSync(join(ROOT, ts)) ? ts : p;
    });
}

function graph(roots: string[]): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const r of roots) for (const f of files(r)) g.set(f, imports(f));
  return g;
}

/** Every cycle's members (strongly connected components of more than one module, or self-imports). */
function cycles(g: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!g.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (g.get(v) ?? []).includes(v)) out.push(comp.sort());
    }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return out;
}

describe('source tree structure', () => {
  const g = graph(['src', 'sim']);

  it('src/ and sim/ import nothing from test/, testbed/, demo/ or bench/', () => {
    const bad = [...g].flatMap(([f, deps]) => deps.filter((d) => /^(test|testbed|demo|bench)\//.test(d)).map((d) => `${f} → ${d}`));
    expect(bad).toEqual([]);
  });

  it('has no import cycles in src/ and sim/', () => {
    expect(cycles(g)).toEqual([]);
  });

  it('finds a cycle when there is one (the checker itself)', () => {
    const c = cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]));
    expect(c).toEqual([['a', 'b', 'c']]);
  });

  it("the manager's layers import only downward: domain ← data ← services ← API", () => {
    const layer = (f: string) => /^src\/manager\/(domain|data|services|api|dashboard)\//.exec(f)?.[1] ?? null;
    // What each layer must not import (besides the higher layers, the entry points and the composition root).
    const top = ['src/manager/manager.ts', 'src/manager/network.ts', 'src/manager/serve.ts', 'src/manager/cli.ts', 'src/manager/channels-cmd.ts'];
    const forbidden: Record<string, RegExp> = {
      domain: /^src\/manager\/(data|services|api|dashboard)\//,
      data: /^src\/manager\/(services|api|dashboard)\//,
      services: /^src\/manager\/(api|dashboard)\//,
    };
    const bad: string[] = [];
    for (const [f, deps] of g) {
      const l = layer(f);
      if (l === null || !(l in forbidden)) continue;
      for (const d of deps) if (forbidden[l]!.test(d) || top.includes(d)) bad.push(`${f} → ${d}`);
    }
    expect(bad).toEqual([]);
  });

  it('only the key table spells database keys', () => {
    // A key is a short lowercase prefix and '!' at the start of a string or template ('pv!', `c!${id}`).
    const keyLike = /['"`][a-z]{1,2}!/;
    const where = [...files('src'), ...files('test/manager'), 'bench/manager.ts'].filter((f) => f !== 'src/manager/data/keys.ts' && f !== 'test/manager/structure.test.ts');
    const bad = where.flatMap((f) =>
      readFileSync(join(ROOT, f), 'utf8')
        .split('\n')
        .flatMap((line, i) => (keyLike.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(bad).toEqual([]);
  });

  it('no file in src/manager is longer than 400 lines', () => {
    const long = files('src/manager', /\.(ts|js|css|html)$/)
      .map((f) => [f, readFileSync(join(ROOT, f), 'utf8').split('\n').length - 1] as const)
      .filter(([, n]) => n > 400);
    expect(long).toEqual([]);
  });
});
