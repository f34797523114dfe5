// An abortable sleep: the coordinate responder's imposed probe delay and the
// upload retries wait with it, and stop waiting when their service stops.
// Its own module because three protocols share it and none owns it.
import { setMaxListeners } from 'node:events';

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(new Error('aborted'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** An AbortController whose signal may have any number of listeners (every sleep waiting on it adds one, by design). */
export function unboundedController(): AbortController {
  const c = new AbortController();
  setMaxListeners(Infinity, c.signal);
  return c;
}
