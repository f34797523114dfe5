// The coordinate protocol's wire format, /volcrawl/coord/1.0.0: one request
// and one reply per stream, length-prefixed JSON, ≤ 4 KiB each way.
//
//   request  { t: 'probe' | 'info' | 'bye', coord?, load?, crawler? }
//   reply    { coord?, sys?, load?, crawler, turnaroundMs?, stallMs? }
//
// Apart from the service (coord-protocol.ts) and the responder
// (coord-responder.ts) because both sides parse it, and the task protocol and
// the overlay check read its load schema and protocol id without either.
import { z } from 'zod';
import { coordSchema } from './signing.js';

export const COORD_PROTOCOL = '/volcrawl/coord/1.0.0';
export const COORD_MAX_BYTES = 4096;

const count = z.number().int().min(0).max(1_000_000);
/** A crawler's load (src/crawler/task.ts TaskLoad); `threads` is absent from volunteers before session 12. */
export const loadSchema = z.object({ running: count, queued: count, free: count, threads: count.optional() });

export const requestSchema = z.object({
  t: z.enum(['probe', 'info', 'bye']),
  coord: coordSchema.optional(),
  load: loadSchema.optional(),
  crawler: z.boolean().optional(),
});
export const replySchema = z.object({
  coord: coordSchema.optional(),
  /** The responder's Vivaldi coordinate, for the prober's Vivaldi step (absent: `coord` is it). */
  sys: coordSchema.optional(),
  load: loadSchema.optional(),
  crawler: z.boolean(),
  /** Responder's own turnaround (request read → reply written) beyond any
   * imposed delay, ms; subtracted from the measured RTT so a busy responder's
   * queueing does not count as network distance (as NTP does). */
  turnaroundMs: z.number().finite().min(0).max(60_000).optional(),
  /** How long the responder's event loop had been stalled when it read the
   * request, ms: a delay in reading that its turnaround does not cover. */
  stallMs: z.number().finite().min(0).max(60_000).optional(),
});
export type CoordReply = z.infer<typeof replySchema>;
