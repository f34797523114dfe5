// The operator dashboard's routes on the manager's HTTP server: a static page
// and one ES module (no build step, no inline script or style, a strict CSP),
// the time series as JSON, and server-rendered SVG charts. Everything else the
// page shows comes from the JSON API (/api/...), rendered with textContent.
// When the API needs a token, only the page, script and style load without it.
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotFoundError } from '../errors.js';
import type { Route } from '../api/router.js';
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

function reply(res: ServerResponse, type: string, body: string | Buffer): 'sent' {
  const buf = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(200, {
    'content-type': type,
    'content-length': buf.length,
    'cache-control': 'no-store',
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
  });
  res.end(buf);
  return 'sent';
}

async function staticFile(res: ServerResponse, name: string): Promise<'sent'> {
  if (!Object.hasOwn(STATIC, name)) throw new NotFoundError(`no file /dashboard/${name}`);
  return reply(res, STATIC[name]!, await readFile(join(STATIC_DIR, name)));
}

/** `/` (redirect to the page), `/dashboard` and its files, the series and the charts. */
export function dashboardRoutes(sampler: Sampler): Route[] {
  return [
    {
      method: 'GET',
      path: '/',
      public: true,
      async handle({ res }) {
        res.writeHead(302, { location: '/dashboard', 'content-length': 0 });
        res.end();
        return 'sent';
      },
    },
    { method: 'GET', path: '/dashboard', public: true, handle: ({ res }) => staticFile(res, 'index.html') },
    { method: 'GET', path: '/dashboard/:file', public: true, handle: ({ res, params }) => staticFile(res, params.file!) },
    {
      method: 'GET',
      path: '/dashboard/series',
      async handle({ res, query }) {
        const since = Number(query.get('since') ?? 0);
        return reply(res, 'application/json; charset=utf-8', JSON.stringify({ sampleMs: sampler.sampleMs, samples: sampler.samples.filter((s) => s.t > since) }));
      },
    },
    {
      method: 'GET',
      path: '/dashboard/chart/:file',
      async handle({ res, params }) {
        const m = /^([a-z]+)\.svg$/.exec(params.file!);
        if (!m || !(CHARTS as readonly string[]).includes(m[1]!)) throw new NotFoundError(`no chart ${params.file!}`);
        return reply(res, 'image/svg+xml; charset=utf-8', await renderChart(m[1] as ChartName, sampler.samples));
      },
    },
  ];
}
