// The owner's transfer cap as a task thread meets it: every request reserves
// room for its largest possible size first and settles what its connection
// really moved afterwards. Apart from the thread because it is a protocol of
// its own (reserve, wait while spent, settle from the socket counters) that
// src/node/ledger.ts implements the other side of.
import { setTimeout as sleep } from 'node:timers/promises';
import type { SocketBytes } from './socket-bytes.js';

/** Room for one request, settled once with the bytes it moved. */
export interface BudgetRoom {
  settle(down: number, up?: number): void;
}

/** Room for the bytes of one request (the owner's transfer cap; src/node/ledger.ts fits). */
export interface FetchBudget {
  /** Room for one fetch of at most `maxBytes`; null = none left now. */
  reserve(maxBytes: number): BudgetRoom | null;
}

/** Bytes a request and a response's head take on the wire beyond the body, about (counted with the body against the owner's cap). */
export const REQUEST_OVERHEAD_BYTES = 64 * 1024;
/** While the budget is spent, a thread asks again this often (the owner may raise the cap; a pause hands the task on). */
const BUDGET_RETRY_MS = 1000;

/**
 * Room for one request of at most `bodyBytes` of body, waiting while the
 * owner's budget is spent (`onSpent` is told once per wait); null when
 * `signal` stopped the task meanwhile. Without a budget every request fits.
 */
export async function reserveRoom(budget: FetchBudget | undefined, bodyBytes: number, signal: AbortSignal, onSpent?: () => void): Promise<BudgetRoom | null> {
  const free = { settle: () => undefined };
  if (budget === undefined) return signal.aborted ? null : free;
  for (let told = false; ; told = true) {
    if (signal.aborted) return null;
    const room = budget.reserve(bodyBytes + REQUEST_OVERHEAD_BYTES);
    if (room !== null) return room;
    if (!told) onSpent?.();
    try {
      await sleep(BUDGET_RETRY_MS, undefined, { signal });
    } catch {
      return null;
    }
  }
}

/** Runs one request against its reservation and settles what its connection moved, as the OS counts it (socket-bytes.ts: heads, bodies as sent, TLS). One request at a time per connection, so the difference is this request's (a new connection's handshake included). */
export async function metered<T>(sock: SocketBytes, room: BudgetRoom, fetch: () => Promise<T>): Promise<T> {
  const read0 = sock.read;
  const written0 = sock.written;
  try {
    return await fetch();
  } finally {
    room.settle(sock.read - read0, sock.written - written0);
  }
}
