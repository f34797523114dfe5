// `dht-manager volunteers list|show|lift|ban|unban`: the operator's view of
// volunteer reputations, through the running server's HTTP API (a quarantine
// is lifted while the manager runs). The token, when the API needs one, comes
// from --api-token / VOLCRAWL_API_TOKEN or <data-dir>/api-token.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { TOKEN_ENV, TOKEN_FILE } from './api/auth.js';
import { defaultManagerDir } from './serve.js';

interface ApiFlags {
  api: string;
  apiToken?: string;
  dataDir: string;
  json?: boolean;
  by?: string;
}

function token(f: ApiFlags): string | null {
  if (f.apiToken !== undefined) return f.apiToken;
  try {
    return readFileSync(join(f.dataDir, TOKEN_FILE), 'utf8').trim();
  } catch {
    return null;
  }
}

async function call(f: ApiFlags, method: 'GET' | 'POST', path: string, body?: Record<string, unknown>): Promise<unknown> {
  const t = token(f);
  const headers: Record<string, string> = {};
  if (t !== null) headers.authorization = `Bearer ${t}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(new URL(path, f.api), { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), signal: AbortSignal.timeout(30_000) });
  } catch (err) {
    process.stderr.write(`dht-manager volunteers: cannot reach the manager's API at ${f.api}: ${(err as Error).message}\n  is \`dht-manager serve\` running? (--api <url>)\n`);
    process.exit(1);
  }
  const text = await res.text();
  if (!res.ok) {
    let msg = text;
    try {
      msg = (JSON.parse(text) as { error?: string }).error ?? text;
    } catch {
      /* not JSON */
    }
    process.stderr.write(`dht-manager volunteers: ${res.status}: ${msg}\n`);
    process.exit(res.status === 404 ? 3 : 2);
  }
  return JSON.parse(text) as unknown;
}

interface Summary {
  id: string;
  status: string;
  spotCheckRate: number;
  pBad: number;
  totals: { agree: number; disagree: number; lost: number };
  lastVerified: { taskId: string; at: number } | null;
  quarantine: { reason: string } | null;
  ban: { reason: string } | null;
}

function line(v: Summary): string {
  const why = v.ban?.reason ?? v.quarantine?.reason ?? '';
  return `${v.id}\t${v.status}\tcheck ${(v.spotCheckRate * 100).toFixed(1)}%\tP(bad) ${v.pBad.toFixed(3)}\tagree ${v.totals.agree} disagree ${v.totals.disagree} lost ${v.totals.lost}\tverified ${v.lastVerified !== null ? new Date(v.lastVerified.at).toISOString() : '-'}${why !== '' ? `\t${why}` : ''}\n`;
}

function print(f: ApiFlags, x: unknown): void {
  process.stdout.write(f.json === true ? JSON.stringify(x) + '\n' : line(x as Summary));
}

export function registerVolunteers(program: Command): void {
  const v = program.command('volunteers').description("volunteers' reputations: list, show, lift a quarantine, ban, unban (through the running server's API)");
  const common = (c: Command): Command =>
    c
      .option('--api <url>', "the manager's operator API", 'http://127.0.0.1:8787')
      .addOption(new Option('--api-token <token>', 'bearer token (default: <data-dir>/api-token when it exists)').env(TOKEN_ENV))
      .option('--data-dir <dir>', 'manager data directory (for its api-token file)', defaultManagerDir())
      .option('--json', 'print JSON', false);
  common(v.command('list').description('every known volunteer identity with its status, spot-check rate and P(bad)')).action(async (f: ApiFlags) => {
    const r = (await call(f, 'GET', '/api/volunteers')) as { statuses: Record<string, number>; verificationOverhead: number; volunteers: Summary[] };
    if (f.json === true) return void process.stdout.write(JSON.stringify(r) + '\n');
    for (const s of r.volunteers) process.stdout.write(line(s));
    process.stderr.write(`${r.volunteers.length} volunteer(s): ${Object.entries(r.statuses).map(([k, n]) => `${n} ${k}`).join(', ')}; verification overhead ${(r.verificationOverhead * 100).toFixed(1)}%\n`);
  });
  common(v.command('show').description("one volunteer's reputation in full (JSON)").argument('<peerId>')).action(async (id: string, f: ApiFlags) => {
    process.stdout.write(JSON.stringify(await call(f, 'GET', `/api/volunteers/${encodeURIComponent(id)}`), null, 2) + '\n');
  });
  common(v.command('lift').description('lift a quarantine: the evidence is reset and every task of the identity is checked until it shows clean work').argument('<peerId>').option('--by <name>', 'who lifts it (logged)', 'operator')).action(async (id: string, f: ApiFlags) => {
    print(f, await call(f, 'POST', `/api/volunteers/${encodeURIComponent(id)}/lift`, { by: f.by }));
  });
  common(v.command('ban').description('ban an identity: no tasks, uploads refused, its current pages re-crawled by others').argument('<peerId>').requiredOption('--reason <text>', 'why (logged, shown in the API)').option('--by <name>', 'who bans it (logged)', 'operator')).action(
    async (id: string, f: ApiFlags & { reason: string }) => {
      print(f, await call(f, 'POST', `/api/volunteers/${encodeURIComponent(id)}/ban`, { by: f.by, reason: f.reason }));
    },
  );
  common(v.command('unban').description('lift a ban (the identity starts on probation)').argument('<peerId>').option('--by <name>', 'who lifts it (logged)', 'operator')).action(async (id: string, f: ApiFlags) => {
    print(f, await call(f, 'POST', `/api/volunteers/${encodeURIComponent(id)}/unban`, { by: f.by }));
  });
}
