// The volunteer ⇄ manager state exchange. A volunteer tells its manager whether
// its owner lets it crawl (and why not: schedule, cap, busy, battery, owner)
// whenever that changes and whenever it (re)connects; the manager answers with
// the operator's configuration, signed with the manager's key:
//
//   request  { state, reasons, since, reach? }                  ≤ 4 KiB
//   reply    { payload, sig, pullForMs? }  payload = JSON { v, issuer, issuedAt, contactUrl }
//
// `pullForMs`: the manager's pushes to this volunteer failed lately
// (push-failures.ts): it should pull its tasks for that long (task-pull.ts). Not
// signed: the connection authenticates the manager, and a relay in between
// sees only Noise-encrypted bytes.
//
// The report needs no signature of its own: the libp2p connection
// authenticates the sender, and the manager keeps it per peer id. The
// configuration is signed so that what a volunteer puts in its User-Agent is
// provably the operator's (a relay or a peer in between cannot swap the
// contact URL): the signature covers a domain tag and the exact payload bytes,
// so it can never be taken for a task order's signature by the same key.
import { z } from 'zod';
import type { Logger } from 'pino';
import type { Connection, Libp2p, PrivateKey, Stream } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { jsonChannel } from './wire.js';
import { PeerRateLimiter } from './rate-limit.js';

export const VOLUNTEER_STATE_PROTOCOL = '/volcrawl/volunteer-state/1.0.0';
const MAX_BYTES = 4096;
const TIMEOUT_MS = 15_000;

/** Why a volunteer is not crawling (src/node/run-policy.ts decides them). */
export const OWNER_PAUSE_REASONS = ['owner', 'cap', 'schedule', 'battery', 'busy'] as const;
export type OwnerPauseReason = (typeof OWNER_PAUSE_REASONS)[number];

/** How others reach a volunteer, as it last reported (docs/nat.md): directly (public, or a router's port
 * mapping), relayed (some peers punched a direct connection: punched), pulling its tasks, or not known yet. */
export const REACH_KINDS = ['public', 'mapped', 'punched', 'relayed', 'pull', 'starting', 'unreachable'] as const;
export type ReachKind = (typeof REACH_KINDS)[number];

export const stateReportSchema = z.strictObject({
  state: z.enum(['running', 'paused']),
  reasons: z.array(z.enum(OWNER_PAUSE_REASONS)).max(OWNER_PAUSE_REASONS.length),
  /** Epoch ms the state began (the volunteer's clock). */
  since: z.number().int().min(0).max(8.64e15),
  /** How others reach it (behind NAT; absent on a LAN network). */
  reach: z.enum(REACH_KINDS).optional(),
});
export type StateReport = z.infer<typeof stateReportSchema>;

/** The longest contact URL: it goes into every request's User-Agent. */
export const MAX_CONTACT_URL = 200;

/** Checks an operator's contact URL; returns the normalised URL or throws with the reason. */
export function checkContactUrl(v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new Error('expected an absolute http(s) URL');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('expected an http(s) URL');
  if (u.href.length > MAX_CONTACT_URL || /[\s();]/.test(u.href)) {
    throw new Error(`the URL must be under ${MAX_CONTACT_URL} characters, without spaces, parentheses or semicolons (it goes into a User-Agent comment)`);
  }
  return u.href;
}

const peerIdString = z.string().min(10).max(128).regex(/^[1-9A-HJ-NP-Za-km-z]+$/, 'base58btc peer id');
export const operatorConfigSchema = z.strictObject({
  v: z.literal(1),
  issuer: peerIdString,
  issuedAt: z.number().int().min(0),
  contactUrl: z
    .string()
    .max(MAX_CONTACT_URL)
    .nullable()
    .refine((v) => {
      if (v === null) return true;
      try {
        return checkContactUrl(v) === v;
      } catch {
        return false;
      }
    }, 'not a usable contact URL'),
});
export type OperatorConfig = z.infer<typeof operatorConfigSchema>;

const signedSchema = z.strictObject({
  payload: z.string().min(2).max(2048),
  sig: z.string().min(1).max(1024).regex(/^[A-Za-z0-9+/=]+$/),
});
export type SignedConfig = z.infer<typeof signedSchema>;

const enc = new TextEncoder();
const TAG = 'volcrawl/operator-config/v1\n';

export async function signOperatorConfig(cfg: OperatorConfig, key: PrivateKey): Promise<SignedConfig> {
  const payload = JSON.stringify(cfg);
  const sig = await key.sign(enc.encode(TAG + payload));
  return { payload, sig: Buffer.from(sig).toString('base64') };
}

export class ConfigSignatureError extends Error {
  override name = 'ConfigSignatureError';
}

/** Verifies an untrusted signed configuration against the manager's peer id (its public key). */
export async function verifyOperatorConfig(raw: unknown, manager: string): Promise<OperatorConfig> {
  const env = signedSchema.safeParse(raw);
  if (!env.success) throw new ConfigSignatureError('malformed configuration envelope');
  let json: unknown;
  try {
    json = JSON.parse(env.data.payload);
  } catch {
    throw new ConfigSignatureError('configuration payload is not JSON');
  }
  const cfg = operatorConfigSchema.safeParse(json);
  if (!cfg.success) throw new ConfigSignatureError(`malformed configuration: ${cfg.error.issues[0]?.path.join('.') ?? ''} ${cfg.error.issues[0]?.message ?? ''}`.trim());
  if (cfg.data.issuer !== manager) throw new ConfigSignatureError(`configuration issued by ${cfg.data.issuer}, not the manager`);
  let ok: boolean;
  try {
    const key = peerIdFromString(manager).publicKey;
    ok = key !== undefined && (await key.verify(enc.encode(TAG + env.data.payload), new Uint8Array(Buffer.from(env.data.sig, 'base64'))));
  } catch {
    ok = false;
  }
  if (!ok) throw new ConfigSignatureError('bad signature on the configuration');
  return cfg.data;
}

/** The longest pull the manager may ask for, ms (an hour). */
export const MAX_PULL_ADVICE_MS = 3_600_000;
const adviceSchema = z.number().int().min(0).max(MAX_PULL_ADVICE_MS).optional();

/** Volunteer side: reports `report` to the manager and returns its verified configuration, and how long
 * the manager asks it to pull its tasks (0: pushes reach it). */
export async function reportState(libp2p: Libp2p, manager: string, report: StateReport): Promise<{ config: OperatorConfig; pullForMs: number }> {
  const stream = await libp2p.dialProtocol(peerIdFromString(manager), VOLUNTEER_STATE_PROTOCOL, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  const ch = jsonChannel(stream, MAX_BYTES, TIMEOUT_MS);
  try {
    await ch.write(report);
    const reply = await ch.read();
    await ch.close();
    const { pullForMs, ...signed } = (typeof reply === 'object' && reply !== null ? reply : {}) as { pullForMs?: unknown };
    const advice = adviceSchema.safeParse(pullForMs);
    if (!advice.success) throw new ConfigSignatureError('malformed pull advice');
    return { config: await verifyOperatorConfig(signed, manager), pullForMs: advice.data ?? 0 };
  } catch (err) {
    ch.abort('state report failed');
    throw err;
  }
}

export interface StateReceiverOptions {
  libp2p: Libp2p;
  /** The configuration every reporting volunteer gets (signed once, at start). */
  config: SignedConfig;
  /** Takes the report; returns how long the volunteer should pull its tasks, ms (0 or nothing: pushes reach it). */
  onReport: (from: string, report: StateReport) => number | void;
  log?: Logger;
}

/** Manager side: takes state reports (bounded, rate-limited per peer) and answers with the signed configuration. */
export class StateReceiver {
  private readonly limiter = new PeerRateLimiter({ perSecond: 2, burst: 10 });
  constructor(private readonly o: StateReceiverOptions) {}

  async start(): Promise<void> {
    await this.o.libp2p.handle(VOLUNTEER_STATE_PROTOCOL, (s, c) => this.onStream(s, c), { maxInboundStreams: 16 });
  }

  async stop(): Promise<void> {
    await this.o.libp2p.unhandle(VOLUNTEER_STATE_PROTOCOL).catch(() => undefined);
  }

  private async onStream(stream: Stream, conn: Connection): Promise<void> {
    const from = conn.remotePeer.toString();
    const ch = jsonChannel(stream, MAX_BYTES, TIMEOUT_MS);
    try {
      if (!this.limiter.take(from)) return ch.abort('rate limited');
      const report = stateReportSchema.safeParse(await ch.read());
      if (!report.success) return ch.abort('malformed state report');
      const pullForMs = Math.min(MAX_PULL_ADVICE_MS, Math.max(0, Math.round(this.o.onReport(from, report.data) ?? 0)));
      await ch.write(pullForMs > 0 ? { ...this.o.config, pullForMs } : this.o.config);
      await ch.close();
    } catch (err) {
      this.o.log?.debug({ peer: from, err: String(err) }, 'state report stream failed');
      ch.abort('state report failed');
    }
  }
}
