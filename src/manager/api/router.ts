// The route table's matcher: one list of routes answers both "which handler"
// and, when none fits, 405 (the path exists with other methods; Allow lists
// them) or 404. HEAD is answered wherever GET is (node sends no body).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from '../errors.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** `:name` segments of the route's path, decoded. */
  params: Record<string, string>;
  query: URLSearchParams;
}

/** A JSON answer, or 'sent' when the handler wrote the response itself (files, SVG). */
export type Reply = { status: number; body: unknown; headers?: Record<string, string> } | 'sent';

export interface Route {
  method: Method;
  /** Segments separated by '/', `:name` matching any one segment. */
  path: string;
  /** Needs no token: it carries no data (the dashboard's page, script and style). */
  public?: boolean;
  /** Body types accepted besides application/json (api/guard.ts's Content-Type check). */
  bodyTypes?: readonly string[];
  handle(r: RouteRequest): Promise<Reply>;
}

export interface Match {
  route: Route;
  params: Record<string, string>;
}

interface Compiled {
  route: Route;
  segs: string[];
  literals: number;
}

export class RouteTable {
  private readonly routes: Compiled[];

  constructor(routes: readonly Route[]) {
    // Literal segments win over parameters (POST /api/channels/import before /api/channels/:id).
    this.routes = routes
      .map((route) => {
        const segs = route.path.split('/').filter((s) => s !== '');
        return { route, segs, literals: segs.filter((s) => !s.startsWith(':')).length };
      })
      .sort((a, b) => b.literals - a.literals);
  }

  /** The route for this method and path, or HttpError 405 (with Allow) / 404. */
  match(method: string, parts: readonly string[], path: string): Match {
    const allowed = new Set<string>();
    for (const c of this.routes) {
      const params = matchPath(c.segs, parts);
      if (params === null) continue;
      if (c.route.method === method || (method === 'HEAD' && c.route.method === 'GET')) return { route: c.route, params };
      allowed.add(c.route.method);
      if (c.route.method === 'GET') allowed.add('HEAD');
    }
    if (allowed.size > 0) throw new HttpError(405, `method ${method} not allowed on ${path}`, { allow: [...allowed].sort().join(', ') });
    throw new HttpError(404, `no route ${method} ${path}`);
  }
}

function matchPath(segs: readonly string[], parts: readonly string[]): Record<string, string> | null {
  if (segs.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    if (s.startsWith(':')) params[s.slice(1)] = parts[i]!;
    else if (s !== parts[i]) return null;
  }
  return params;
}
