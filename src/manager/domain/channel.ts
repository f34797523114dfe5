// The manager's data model: channels (paper §2.1), their validation, and the
// records kept per channel. Every field an operator can set is validated here
// with zod plus the crawler's own checks (URL scheme, scope, ReDoS-safe filters)
// so a channel the manager accepts always yields a task the crawler accepts.
import { z } from 'zod';
import { checkFilterPattern, parseOrigin, TASK_LIMITS, TaskValidationError } from '../../crawler/task.js';
import { ValidationError } from '../errors.js';
import type { VisitObservation } from './estimator.js';

export const CHANNEL_KINDS = ['host', 'directory', 'directories'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** A stored channel. Times are epoch ms unless named otherwise. */
export interface Channel {
  id: string;
  kind: ChannelKind;
  origin: string;
  /** Host name (for routing, RTT reports and placement). */
  host: string;
  pathPrefixes: string[];
  seeds: string[];
  filters: string[];
  depth: number;
  expectedPages: number;
  maxPages: number;
  delayMs: number;
  /** Priority group (0 = highest, most frequently changing). */
  group: number;
  /** When true the estimator never moves the channel between groups. */
  pinnedGroup: boolean;
  /** Estimated change rate, changes per page per minute (null = no evidence yet). */
  changeRate: number | null;
  /** The change interval used by the recrawl strategy, minutes. */
  changeInterval: number;
  createdAt: number;
  updatedAt: number;
  note?: string;
}

/** One recrawl's record (kept per channel, last HISTORY_KEEP). */
export interface RecrawlHistoryRecord {
  taskId: string;
  issuedAt: number;
  finishedAt: number;
  status: string;
  crawler?: string;
  pagesFetched: number;
  pagesChanged: number;
  revisited: number;
  revisitedChanged: number;
  newPages: number;
  downloadMs: number;
  /** The estimator observation this visit produced (null for the first visit). */
  observation: VisitObservation | null;
}

export const HISTORY_KEEP = 50;

const urlString = z.string().min(1).max(TASK_LIMITS.urlLength);

export const channelInputSchema = z
  .object({
    /** Convenience: a URL; the channel is its host ('host') or its directory ('directory'). */
    url: urlString.optional(),
    origin: urlString.optional(),
    kind: z.enum(CHANNEL_KINDS).optional(),
    pathPrefixes: z.array(z.string().min(1).max(TASK_LIMITS.urlLength)).min(1).max(TASK_LIMITS.pathPrefixes).optional(),
    seeds: z.array(urlString).min(1).max(1000).optional(),
    filters: z.array(z.string().min(1).max(TASK_LIMITS.filterLength)).max(TASK_LIMITS.filters).optional(),
    depth: z.number().int().min(0).max(TASK_LIMITS.maxDepth).optional(),
    expectedPages: z.number().int().min(0).max(TASK_LIMITS.expectedPages).optional(),
    maxPages: z.number().int().min(1).max(TASK_LIMITS.maxPages).optional(),
    delayMs: z.number().int().min(0).max(TASK_LIMITS.delayMs).optional(),
    group: z.number().int().min(0).max(63).optional(),
    pinnedGroup: z.boolean().optional(),
    /** Operator's prior for the change interval, minutes. */
    changeInterval: z.number().finite().min(0.01).max(1e9).optional(),
    note: z.string().max(1000).optional(),
  })
  .strict();
export type ChannelInput = z.infer<typeof channelInputSchema>;

export const channelPatchSchema = channelInputSchema
  .omit({ url: true, origin: true, kind: true, pathPrefixes: true })
  .strict();
export type ChannelPatch = z.infer<typeof channelPatchSchema>;

export interface ChannelDefaults {
  depth: number;
  expectedPages: number;
  maxPages: number;
  delayMs: number;
}

export const CHANNEL_DEFAULTS: ChannelDefaults = { depth: 3, expectedPages: 1000, maxPages: 10_000, delayMs: 1000 };

function zodMessage(err: z.ZodError): string {
  const i = err.issues[0];
  const where = i && i.path.length > 0 ? i.path.join('.') : 'body';
  return `${where}: ${i?.message ?? 'invalid'}`;
}

function checkHttpUrl(s: string, where: string): URL {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new ValidationError(`${where}: not a URL: ${JSON.stringify(s.slice(0, 200))}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ValidationError(`${where}: scheme ${u.protocol} not allowed (http and https only)`);
  if (u.username || u.password) throw new ValidationError(`${where}: credentials in URLs are not allowed`);
  u.hash = '';
  return u;
}

export function checkFilters(filters: readonly string[]): void {
  filters.forEach((f, i) => {
    const reason = checkFilterPattern(f);
    if (reason !== null) throw new ValidationError(`filters.${i}: ${reason}`);
  });
}

function inPrefixes(u: URL, origin: string, prefixes: readonly string[]): boolean {
  return u.origin === origin && prefixes.some((p) => u.pathname.startsWith(p));
}

/** The identity of a channel: origin plus sorted prefixes (duplicates are refused). */
export function channelKey(origin: string, prefixes: readonly string[]): string {
  return `${origin} ${[...prefixes].sort().join(' ')}`;
}

/** Validates an operator's channel input and builds the channel (without id/times/group state). */
export function buildChannel(
  raw: unknown,
  o: { id: string; now: number; groupCount: number; defaultGroup: number; groupIntervals: readonly number[]; defaults?: ChannelDefaults },
): Channel {
  const parsed = channelInputSchema.safeParse(raw);
  if (!parsed.success) throw new ValidationError(zodMessage(parsed.error));
  const inp = parsed.data;
  const d = o.defaults ?? CHANNEL_DEFAULTS;
  let origin: string;
  let prefixes: string[];
  let kind: ChannelKind;
  let seedDefault: string;
  if (inp.url !== undefined) {
    if (inp.origin !== undefined) throw new ValidationError('give either url or origin, not both');
    const u = checkHttpUrl(inp.url, 'url');
    origin = u.origin;
    const wantKind = inp.kind ?? (u.pathname === '/' || u.pathname === '' ? 'host' : 'directory');
    if (inp.pathPrefixes !== undefined) {
      prefixes = inp.pathPrefixes;
    } else if (wantKind === 'host') {
      prefixes = ['/'];
    } else {
      prefixes = [u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1) || '/'];
    }
    kind = wantKind;
    seedDefault = u.href;
  } else if (inp.origin !== undefined) {
    try {
      origin = parseOrigin(inp.origin);
    } catch (err) {
      throw new ValidationError(err instanceof TaskValidationError ? err.reason : String(err));
    }
    prefixes = inp.pathPrefixes ?? ['/'];
    kind = inp.kind ?? (prefixes.length === 1 && prefixes[0] === '/' ? 'host' : prefixes.length === 1 ? 'directory' : 'directories');
    seedDefault = origin + prefixes[0]!;
  } else {
    throw new ValidationError('url or origin is required');
  }
  prefixes.forEach((p, i) => {
    if (!p.startsWith('/')) throw new ValidationError(`pathPrefixes.${i}: ${JSON.stringify(p)} must start with '/'`);
  });
  prefixes = [...new Set(prefixes)];
  if (kind === 'host' && !(prefixes.length === 1 && prefixes[0] === '/')) throw new ValidationError("kind 'host' means pathPrefixes ['/']");
  if (kind === 'directory' && prefixes.length !== 1) throw new ValidationError("kind 'directory' takes exactly one path prefix");
  if (kind === 'directories' && prefixes.length < 1) throw new ValidationError("kind 'directories' takes one or more path prefixes");
  const seeds = (inp.seeds ?? [seedDefault]).map((s, i) => {
    const u = checkHttpUrl(s, `seeds.${i}`);
    if (!inPrefixes(u, origin, prefixes)) throw new ValidationError(`seeds.${i}: ${u.href} is outside the channel ${origin} ${prefixes.join(',')}`);
    return u.href;
  });
  const filters = inp.filters ?? [];
  checkFilters(filters);
  if (inp.group !== undefined && inp.group >= o.groupCount) throw new ValidationError(`group: must be below ${o.groupCount}`);
  const changeInterval = inp.changeInterval ?? o.groupIntervals[inp.group ?? o.defaultGroup]!;
  return {
    id: o.id,
    kind,
    origin,
    host: new URL(origin).hostname,
    pathPrefixes: prefixes,
    seeds: [...new Set(seeds)],
    filters,
    depth: inp.depth ?? d.depth,
    expectedPages: inp.expectedPages ?? d.expectedPages,
    maxPages: inp.maxPages ?? d.maxPages,
    delayMs: inp.delayMs ?? d.delayMs,
    group: inp.group ?? o.defaultGroup,
    pinnedGroup: inp.pinnedGroup ?? false,
    changeRate: null,
    changeInterval,
    createdAt: o.now,
    updatedAt: o.now,
    ...(inp.note !== undefined ? { note: inp.note } : {}),
  };
}

/** Applies a validated patch; returns the new channel. */
export function patchChannel(ch: Channel, raw: unknown, o: { now: number; groupCount: number }): Channel {
  const parsed = channelPatchSchema.safeParse(raw);
  if (!parsed.success) throw new ValidationError(zodMessage(parsed.error));
  const p = parsed.data;
  const next: Channel = { ...ch, updatedAt: o.now };
  if (p.seeds !== undefined) {
    next.seeds = [
      ...new Set(
        p.seeds.map((s, i) => {
          const u = checkHttpUrl(s, `seeds.${i}`);
          if (!inPrefixes(u, ch.origin, ch.pathPrefixes)) throw new ValidationError(`seeds.${i}: ${u.href} is outside the channel`);
          return u.href;
        }),
      ),
    ];
  }
  if (p.filters !== undefined) {
    checkFilters(p.filters);
    next.filters = p.filters;
  }
  if (p.group !== undefined) {
    if (p.group >= o.groupCount) throw new ValidationError(`group: must be below ${o.groupCount}`);
    next.group = p.group;
  }
  if (p.depth !== undefined) next.depth = p.depth;
  if (p.expectedPages !== undefined) next.expectedPages = p.expectedPages;
  if (p.maxPages !== undefined) next.maxPages = p.maxPages;
  if (p.delayMs !== undefined) next.delayMs = p.delayMs;
  if (p.pinnedGroup !== undefined) next.pinnedGroup = p.pinnedGroup;
  if (p.changeInterval !== undefined) next.changeInterval = p.changeInterval;
  if (p.note !== undefined) next.note = p.note;
  return next;
}

/** Parses a seed list file: one URL per line, '#' starts a comment. */
export function parseSeedList(text: string): { urls: string[]; errors: { line: number; reason: string }[] } {
  const urls: string[] = [];
  const errors: { line: number; reason: string }[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const hash = raw.indexOf('#');
    const line = (hash >= 0 ? raw.slice(0, hash) : raw).trim();
    if (line === '') return;
    try {
      urls.push(checkHttpUrl(line, JSON.stringify(line.slice(0, 200))).href);
    } catch (err) {
      errors.push({ line: i + 1, reason: (err as Error).message });
    }
  });
  return { urls, errors };
}
