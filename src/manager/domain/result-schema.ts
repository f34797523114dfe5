// Validation of an uploaded TaskResult part (src/crawler's TaskResult): the
// upload protocol's schema only checks the envelope; everything the storage
// module stores is checked here, with bounds.
import { z } from 'zod';
import { OUTCOMES, TASK_LIMITS } from '../../crawler/task.js';

export const RESULT_LIMITS = {
  pagesPerPart: 10_000,
  validatorsPerPart: 100_000,
  textChars: 2_000_000,
  titleChars: 2000,
  interSiteUrls: 10_000,
  errors: 200,
} as const;

const uint32 = z.number().int().min(0).max(0xffffffff);
const url = z.string().min(1).max(TASK_LIMITS.urlLength);
const count = z.number().int().min(0).max(1e12);

export const pageSchema = z.object({
  url,
  finalUrl: url.optional(),
  status: z.number().int().min(100).max(999),
  depth: z.number().int().min(0).max(TASK_LIMITS.maxDepth),
  fetchedAt: z.number().int().nonnegative(),
  contentType: z.string().max(256),
  bytes: count,
  digest: uint32,
  etag: z.string().max(512).optional(),
  lastModified: z.string().max(128).optional(),
  title: z.string().max(RESULT_LIMITS.titleChars).optional(),
  text: z.string().max(RESULT_LIMITS.textChars),
  noindex: z.boolean().optional(),
});

export const validatorSchema = z.object({
  url,
  etag: z.string().max(512).optional(),
  lastModified: z.string().max(128).optional(),
  digest: uint32,
  depth: z.number().int().min(0).max(TASK_LIMITS.maxDepth),
  /** The WARC payload digest of the body (`--archive full`: kept with capturedAt for the next task's revisits). */
  payloadDigest: z.string().regex(/^sha1:[A-Z2-7]{32}$/).optional(),
  /** When the response record holding that payload was captured. */
  capturedAt: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
});

export const statsSchema = z.object({
  pagesFetched: count,
  pagesChanged: count,
  pagesUnchanged: count,
  pagesNotModified: count,
  pagesFailed: count,
  requests: count,
  bytes: count,
  downloadMs: z.number().finite().nonnegative(),
  rttMs: z.number().finite().nonnegative().nullable(),
  crawlDelayMs: z.number().finite().nonnegative(),
  urlsDiscovered: count,
  urlsSpilled: count,
});

export const TASK_STATUSES = ['completed', 'page-cap', 'deadline', 'robots-unavailable', 'refused', 'cancelled', 'failed'] as const;
/** Statuses that count as an update (the channel's stored content was refreshed). */
export const SUCCESS_STATUSES: ReadonlySet<string> = new Set(['completed', 'page-cap', 'deadline']);

export const resultSchema = z.object({
  taskId: z.string().min(1).max(TASK_LIMITS.idLength),
  channel: z.object({ origin: url, pathPrefixes: z.array(z.string().max(TASK_LIMITS.urlLength)).max(TASK_LIMITS.pathPrefixes) }),
  part: z.number().int().min(0).max(1_000_000),
  final: z.boolean(),
  status: z.enum(TASK_STATUSES),
  reason: z.string().max(2000).optional(),
  startedAt: z.number().nonnegative(),
  finishedAt: z.number().nonnegative(),
  pages: z.array(pageSchema).max(RESULT_LIMITS.pagesPerPart),
  validators: z.array(validatorSchema).max(RESULT_LIMITS.validatorsPerPart),
  newDigests: z.array(uint32).max(RESULT_LIMITS.validatorsPerPart),
  interSiteUrls: z.array(url).max(RESULT_LIMITS.interSiteUrls),
  outcomes: z.partialRecord(z.enum(OUTCOMES), count),
  errors: z.array(z.object({ url: z.string().max(TASK_LIMITS.urlLength), outcome: z.enum(OUTCOMES), detail: z.string().max(2000).optional() })).max(RESULT_LIMITS.errors),
  stats: statsSchema,
});
export type UploadedResult = z.infer<typeof resultSchema>;
