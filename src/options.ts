// Options objects across the project (Vivaldi, probing pace, loop lag,
// plausibility, placement, the simulated overlay, trust): defaults merged with
// what the caller gives, unknown names refused, every rule checked with a
// message naming the options object and the option. Pure.

/** Defaults overlaid with the defined fields of `partial`; throws RangeError on an unknown name. */
export function mergeOptions<T extends object>(name: string, defaults: Readonly<T>, partial: Partial<T>): T {
  const o = { ...defaults } as T;
  for (const [k, v] of Object.entries(partial)) {
    if (v === undefined) continue;
    if (!(k in defaults)) throw new RangeError(`${name}: unknown option '${k}'`);
    (o as Record<string, unknown>)[k] = v;
  }
  return o;
}

/** A checker that throws RangeError(`${name}: ${message}`) when a rule fails. */
export function optionChecker(name: string): (ok: boolean, message: string) => void {
  return (ok, message) => {
    if (!ok) throw new RangeError(`${name}: ${message}`);
  };
}
