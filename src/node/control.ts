// Control of a running node from the same computer only: a Unix domain socket
// <data-dir>/control.sock, never a network port. Only the owner can connect:
// the data directory is kept 0700 and the socket 0600, and the kernel refuses
// anyone else (root aside). Node cannot read the peer's credentials
// (SO_PEERCRED is not exposed), so the file permissions are the check; the
// server refuses to start in a directory another user owns.
//
// Protocol: one JSON object per line each way, bounded in size.
//   → {"id":1,"cmd":"status"}                 ← {"id":1,"ok":true,"result":{...}}
//   → {"cmd":"pause","forMs":7200000}          (forMs absent: until resumed)
//   → {"cmd":"resume"}
//   → {"cmd":"prefs.get"}
//   → {"cmd":"prefs.set","key":"transfer.daily_cap","value":"2G"}
//   ← {"ok":false,"error":"..."} on any failure; a line over the limit closes the connection.
import { chmodSync, lstatSync, mkdirSync, statSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { z } from 'zod';

export const CONTROL_SOCKET = 'control.sock';

export const CONTROL_LIMITS = {
  /** Bytes of one request line. */
  requestBytes: 64 * 1024,
  /** Bytes of one response line the client accepts. */
  responseBytes: 4 * 1024 * 1024,
  /** Connections at once. */
  connections: 8,
  /** A connection idle this long is closed, ms. */
  idleMs: 30_000,
  /** Longest pause asked for: a year. */
  maxPauseMs: 365 * 86_400_000,
} as const;

const id = z.number().int().min(0).max(2 ** 31).optional();
export const requestSchema = z.discriminatedUnion('cmd', [
  z.strictObject({ id, cmd: z.literal('status') }),
  z.strictObject({ id, cmd: z.literal('pause'), forMs: z.number().int().min(1000).max(CONTROL_LIMITS.maxPauseMs).optional() }),
  z.strictObject({ id, cmd: z.literal('resume') }),
  z.strictObject({ id, cmd: z.literal('prefs.get') }),
  z.strictObject({ id, cmd: z.literal('prefs.set'), key: z.string().min(1).max(100), value: z.string().max(16_384) }),
]);
export type ControlRequest = z.infer<typeof requestSchema>;

/** What the running node does for each request (phase 2 implements it on VolunteerNode). Results must be JSON. */
export interface ControlHandler {
  status(): unknown;
  pause(forMs: number | undefined): unknown;
  resume(): unknown;
  prefsGet(): unknown;
  prefsSet(key: string, value: string): unknown;
}

export class ControlError extends Error {
  override name = 'ControlError';
}

/** No node listens on the data directory's socket. */
export class NoNodeError extends ControlError {
  override name = 'NoNodeError';
  constructor(readonly dataDir: string) {
    super(`no running node in ${dataDir}`);
  }
}

export function socketPath(dataDir: string): string {
  return join(dataDir, CONTROL_SOCKET);
}

/**
 * Throws ControlError when a node already runs with `dataDir` (its control
 * socket answers) or the socket's path is taken by something else. `join`
 * calls it first, so a second node on the same directory stops before it
 * starts libp2p, not after. True when a dead node's socket is left there.
 */
export async function assertNoNodeRunning(dataDir: string): Promise<boolean> {
  const path = socketPath(dataDir);
  let existing = false;
  try {
    existing = lstatSync(path).isSocket();
    if (!existing) throw new ControlError(`${path} exists and is not a socket: move it away`);
  } catch (e) {
    if (e instanceof ControlError) throw e;
  }
  if (existing && (await answers(path))) throw new ControlError(`a node is already running with ${dataDir} (its control socket answers)`);
  return existing;
}

/** Unix socket paths are limited to 107 bytes on Linux (103 on macOS). */
function checkPathLength(path: string): void {
  const max = process.platform === 'darwin' ? 103 : 107;
  if (Buffer.byteLength(path) > max) throw new ControlError(`the control socket path ${path} is longer than ${max} bytes, the limit for Unix sockets; use a shorter --data-dir`);
}

/** Makes the data directory private (0700) and checks we own it. Returns a note when it had to tighten it. */
function securePrivateDir(dataDir: string): string | null {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const st = statSync(dataDir);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) throw new ControlError(`${dataDir} belongs to user id ${st.uid}, not to you (${uid}): refusing to put a control socket there`);
  if ((st.mode & 0o077) !== 0) {
    chmodSync(dataDir, 0o700);
    return `${dataDir} was readable by others (mode ${(st.mode & 0o777).toString(8)}); made it 0700`;
  }
  return null;
}

function respond(sock: Socket, body: object): void {
  if (!sock.destroyed) sock.write(JSON.stringify(body) + '\n');
}

export class ControlServer {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly path: string,
    /** Set when the data directory's permissions had to be tightened. */
    readonly note: string | null,
  ) {}

  /** Listens on <dataDir>/control.sock; throws ControlError when another node already does. */
  static async start(dataDir: string, handler: ControlHandler): Promise<ControlServer> {
    const path = socketPath(dataDir);
    checkPathLength(path);
    const note = securePrivateDir(dataDir);
    if (await assertNoNodeRunning(dataDir)) unlinkSync(path); // left by a node that died
    const server = createServer({ allowHalfOpen: false });
    const self = new ControlServer(server, path, note);
    server.maxConnections = CONTROL_LIMITS.connections;
    server.on('connection', (sock) => self.serve(sock, handler));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // The directory is 0700 already, so the moment before this chmod exposes nothing.
    chmodSync(path, 0o600);
    return self;
  }

  private serve(sock: Socket, handler: ControlHandler): void {
    this.sockets.add(sock);
    sock.on('close', () => this.sockets.delete(sock));
    sock.on('error', () => sock.destroy());
    sock.setTimeout(CONTROL_LIMITS.idleMs, () => sock.destroy());
    let buf = '';
    let chain = Promise.resolve();
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (Buffer.byteLength(line) > CONTROL_LIMITS.requestBytes) return this.tooLarge(sock);
        chain = chain.then(() => this.handleLine(sock, line, handler));
      }
      if (Buffer.byteLength(buf) > CONTROL_LIMITS.requestBytes) this.tooLarge(sock);
    });
  }

  private tooLarge(sock: Socket): void {
    respond(sock, { ok: false, error: `request larger than ${CONTROL_LIMITS.requestBytes} bytes` });
    sock.end();
    sock.destroy();
  }

  private async handleLine(sock: Socket, line: string, handler: ControlHandler): Promise<void> {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return respond(sock, { ok: false, error: 'not JSON: one JSON object per line' });
    }
    const r = requestSchema.safeParse(json);
    if (!r.success) {
      const issue = r.error.issues[0];
      return respond(sock, { ok: false, error: `bad request: ${issue ? `${issue.path.join('.') || 'cmd'}: ${issue.message}` : 'invalid'}` });
    }
    const req = r.data;
    const rid = req.id !== undefined ? { id: req.id } : {};
    try {
      let result: unknown;
      if (req.cmd === 'status') result = await handler.status();
      else if (req.cmd === 'pause') result = await handler.pause(req.forMs);
      else if (req.cmd === 'resume') result = await handler.resume();
      else if (req.cmd === 'prefs.get') result = await handler.prefsGet();
      else result = await handler.prefsSet(req.key, req.value);
      respond(sock, { ...rid, ok: true, result: result ?? null });
    } catch (e) {
      respond(sock, { ...rid, ok: false, error: (e as Error).message ?? String(e) });
    }
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Does something answer on this socket? */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Sends one request to the node using `dataDir`; resolves with its result. Throws NoNodeError or ControlError. */
export async function controlRequest(dataDir: string, req: ControlRequest, timeoutMs = 15_000): Promise<unknown> {
  const path = socketPath(dataDir);
  checkPathLength(path);
  return new Promise((resolve, reject) => {
    const sock = createConnection(path);
    let buf = '';
    let done = false;
    const finish = (err: Error | null, value?: unknown) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(value);
    };
    const timer = setTimeout(() => finish(new ControlError(`the node in ${dataDir} did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
    sock.setEncoding('utf8');
    sock.once('connect', () => sock.write(JSON.stringify(req) + '\n'));
    sock.on('data', (chunk: string) => {
      buf += chunk;
      if (buf.length > CONTROL_LIMITS.responseBytes) return finish(new ControlError('the node sent an oversized answer'));
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      let msg: { ok?: unknown; result?: unknown; error?: unknown };
      try {
        msg = JSON.parse(buf.slice(0, nl)) as typeof msg;
      } catch {
        return finish(new ControlError('the node sent something that is not JSON'));
      }
      if (msg.ok === true) finish(null, msg.result);
      else finish(new ControlError(typeof msg.error === 'string' ? msg.error : 'the node refused the request'));
    });
    sock.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED') finish(new NoNodeError(dataDir));
      else if (e.code === 'EACCES' || e.code === 'EPERM') finish(new ControlError(`permission denied on ${path}: the node there belongs to another user`));
      else finish(new ControlError(`cannot reach the node in ${dataDir}: ${e.message}`));
    });
    sock.on('close', () => finish(new ControlError(`the node in ${dataDir} closed the connection without answering`)));
  });
}
