// The operator dashboard on the manager's HTTP server: a static page and one
// ES module (no build step, no inline script or style, a strict CSP), the
// time series as JSON, and server-rendered SVG charts. Everything else the
// page shows comes from the JSON API (/api/...), rendered with textContent.
// When the API needs a token, only the page, script and style load without it.
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApiContext } from '../http.js';
import { CHARTS, renderChart, type ChartName } from './charts.js';
import type { Sampler } from './sampler.js';

const STATIC_DIR = join(dirname(fileURLToPath(import.meta.url)), 'static');
const STATIC: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};

// img-src blob: because the page fetches the charts itself (with the token) and shows them from blob: URLs.
export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function headers(type: string, length: number): Record<string, string | number> {
  return {
    'content-type': type,
    'content-length': length,
    'cache-control': 'no-store',
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
  };
}

function reply(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, headers(type, buf.length));
  res.end(res.req.method === 'HEAD' ? undefined : buf);
}

/** `/`, `/dashboard` and its static files: the parts of the dashboard that carry no data. */
export function isDashboardAsset(parts: readonly string[]): boolean {
  if (parts.length === 0) return true;
  if (parts[0] !== 'dashboard') return false;
  return parts.length === 1 || (parts.length === 2 && Object.hasOwn(STATIC, parts[1]!));
}

/** Serves `/` (redirect), `/dashboard[/…]`. Returns false when the path is not the dashboard's. */
export async function handleDashboard(_ctx: ApiContext, sampler: Sampler, parts: string[], u: URL, res: ServerResponse): Promise<boolean> {
  if (parts.length === 0) {
    res.writeHead(302, { location: '/dashboard', 'content-length': 0 });
    res.end();
    return true;
  }
  if (parts.length === 1) {
    reply(res, 200, STATIC['index.html']!, await readFile(join(STATIC_DIR, 'index.html')));
    return true;
  }
  const name = parts[1]!;
  if (parts.length === 2 && Object.hasOwn(STATIC, name)) {
    reply(res, 200, STATIC[name]!, await readFile(join(STATIC_DIR, name)));
    return true;
  }
  if (parts.length === 2 && name === 'series') {
    const since = Number(u.searchParams.get('since') ?? 0);
    reply(res, 200, 'application/json; charset=utf-8', JSON.stringify({ sampleMs: sampler.sampleMs, samples: sampler.samples.filter((s) => s.t > since) }));
    return true;
  }
  if (parts.length === 3 && name === 'chart') {
    const m = /^([a-z]+)\.svg$/.exec(parts[2]!);
    if (m && (CHARTS as readonly string[]).includes(m[1]!)) {
      reply(res, 200, 'image/svg+xml; charset=utf-8', await renderChart(m[1] as ChartName, sampler.samples));
      return true;
    }
  }
  return false;
}
