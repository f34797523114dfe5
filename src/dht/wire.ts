// Length-prefixed JSON messages over a libp2p 3 stream, with a size cap and a
// deadline on every exchange. Every inbound message is untrusted: callers
// validate what `readJson` returns with a zod schema before using it.
import { lpStream, type LengthPrefixedStream } from '@libp2p/utils';
import type { Stream } from '@libp2p/interface';
import { setMaxListeners } from 'node:events';

export class WireError extends Error {
  override name = 'WireError';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export interface JsonChannel {
  read(): Promise<unknown>;
  write(value: unknown): Promise<void>;
  /** One message as bytes (a binary frame between JSON ones), same cap and deadline. */
  readBytes(): Promise<Uint8Array>;
  writeBytes(bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
  abort(reason: string): void;
}

/** A deadline signal for one exchange or query. libp2p and kad-dht attach a
 * listener per parallel path to it; it dies with the exchange, so the default
 * limit of 10 listeners would only produce false leak warnings. */
export function deadlineSignal(timeoutMs: number): AbortSignal {
  const signal = AbortSignal.timeout(timeoutMs);
  setMaxListeners(Infinity, signal);
  return signal;
}

/** Wraps a stream so that each read/write is one length-prefixed JSON message
 * (or, with readBytes/writeBytes, a binary one) of at most `maxBytes`, and
 * every operation fails after `timeoutMs`. `writeMaxBytes` (default
 * `maxBytes`) caps what this side sends, for protocols whose answers are far
 * larger than the requests they read. */
export function jsonChannel(stream: Stream, maxBytes: number, timeoutMs: number, writeMaxBytes = maxBytes): JsonChannel {
  const lp: LengthPrefixedStream<Stream> = lpStream(stream, { maxDataLength: maxBytes });
  const deadline = deadlineSignal(timeoutMs);
  return {
    async read() {
      const buf = await lp.read({ signal: deadline });
      let text: string;
      try {
        text = decoder.decode(buf.subarray());
      } catch {
        throw new WireError('message is not valid UTF-8');
      }
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new WireError('message is not valid JSON');
      }
    },
    async readBytes() {
      return (await lp.read({ signal: deadline })).subarray();
    },
    async writeBytes(bytes) {
      if (bytes.byteLength > writeMaxBytes) throw new WireError(`message of ${bytes.byteLength} bytes exceeds the ${writeMaxBytes}-byte cap`);
      await lp.write(bytes, { signal: deadline });
    },
    async write(value) {
      const bytes = encoder.encode(JSON.stringify(value));
      if (bytes.byteLength > writeMaxBytes) throw new WireError(`message of ${bytes.byteLength} bytes exceeds the ${writeMaxBytes}-byte cap`);
      await lp.write(bytes, { signal: deadline });
    },
    async close() {
      try {
        await stream.close({ signal: AbortSignal.timeout(Math.min(timeoutMs, 2_000)) });
      } catch {
        stream.abort(new WireError('close failed'));
      }
    },
    abort(reason) {
      stream.abort(new WireError(reason));
    },
  };
}

export function byteLengthOfJson(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).byteLength;
}
