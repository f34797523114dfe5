// Deadlines for the punch's steps that also end when the service stops.
//
// Not `AbortSignal.any([stop, AbortSignal.timeout(ms)])`: on Node 20 a timeout
// signal inside a composite is held only weakly (nodejs/node#57736), so a
// garbage collection before it fires loses it and the composite never aborts.
// A punch whose SYNs went unanswered then waited for the kernel to give up
// (about two minutes), connected again, and never ended: no event, the attempt
// in flight and the peer busy for good — the forced-symmetric case of
// test/nat/holepunch.test.ts, intermittently, on loaded machines where a major
// GC falls inside the 4 s punch window. Here the pending timer holds the
// controller, so the deadline fires whatever the GC does, and `clear()` drops
// the timer and the listener on the parent (a long-lived signal: the service's
// own stop) once the step is over.

export interface Deadline {
  /** Aborts after `ms` (a TimeoutError, as AbortSignal.timeout) or when the parent aborts (its reason). */
  signal: AbortSignal;
  /** Cancels the timer and stops following the parent; call it when the step ends. */
  clear(): void;
}

export function deadline(ms: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController();
  const onParentAbort = (): void => controller.abort(parent?.reason);
  const timer = setTimeout(() => {
    parent?.removeEventListener('abort', onParentAbort);
    controller.abort(new DOMException(`deadline of ${ms} ms passed`, 'TimeoutError'));
  }, ms);
  // Like AbortSignal.timeout: a deadline alone does not keep the process running.
  timer.unref();
  const clear = (): void => {
    clearTimeout(timer);
    parent?.removeEventListener('abort', onParentAbort);
  };
  if (parent?.aborted === true) {
    clear();
    controller.abort(parent.reason);
  } else parent?.addEventListener('abort', onParentAbort, { once: true });
  return { signal: controller.signal, clear };
}

/** Runs `step` under a deadline of `ms` (and `parent`), then clears it whatever the outcome. */
export async function withDeadline<T>(ms: number, parent: AbortSignal | undefined, step: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const d = deadline(ms, parent);
  try {
    return await step(d.signal);
  } finally {
    d.clear();
  }
}
