// The punch's deadlines fire whatever the garbage collector does (deadline.ts).
// The holepunch NAT test's forced-symmetric case intermittently saw no punch
// event at all: each step's deadline was AbortSignal.any([stop,
// AbortSignal.timeout(ms)]), and on Node 20 a collection before the timeout
// fires loses it (nodejs/node#57736), so a simultaneous open that nobody
// answered went on until the kernel gave up. Here the collector runs for sure
// (gc exposed at run time) while a punch connects to a port that refuses it:
// the connect must still end at its deadline, named as a timeout. With the
// old signal this test hangs until vitest's timeout.
import { describe, expect, it } from 'vitest';
import { getEventListeners } from 'node:events';
import { createServer } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { deadline } from '../../src/dht/holepunch/deadline.js';
import { connectFromPort, freeTcpPort, PunchTimeoutError } from '../../src/dht/holepunch/simultaneous-open.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Runs the collector every 20 ms until the returned function is called. */
function collectContinuously(): () => void {
  const t = setInterval(gc, 20);
  return () => clearInterval(t);
}

/** A loopback port nothing listens on (connects to it are refused at once). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('hole-punch deadlines', () => {
  it('fire after garbage collections, as a TimeoutError, and follow the parent signal', async () => {
    const stop = collectContinuously();
    try {
      const fired: unknown[] = [];
      for (let i = 0; i < 20; i++) deadline(150, new AbortController().signal).signal.addEventListener('abort', (e) => fired.push((e.target as AbortSignal).reason), { once: true });
      gc();
      const end = Date.now() + 10_000;
      while (fired.length < 20 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(fired).toHaveLength(20);
      expect((fired[0] as DOMException).name).toBe('TimeoutError');
    } finally {
      stop();
    }
    // The parent's abort ends it with the parent's reason; clear() leaves no listener on the parent.
    const parent = new AbortController();
    const d = deadline(60_000, parent.signal);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    parent.abort(new Error('stopping'));
    expect((d.signal.reason as Error).message).toBe('stopping');
    const other = new AbortController();
    deadline(60_000, other.signal).clear();
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
  }, 30_000);

  it('end a simultaneous open nobody answers, with collections running meanwhile', async () => {
    const [localPort, port] = await Promise.all([freeTcpPort(), closedPort()]);
    const stop = collectContinuously();
    const d = deadline(800, new AbortController().signal);
    try {
      const err = await connectFromPort({ localPort, remote: { ip: '127.0.0.1', port }, signal: d.signal }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PunchTimeoutError);
      expect(String((err as Error).message)).toMatch(/before the deadline \(\d+ connects?, last: (ECONNREFUSED|deadline)\)/);
    } finally {
      d.clear();
      stop();
    }
  }, 30_000);
});
