// The computer's local time is read through Date's fields (no Intl: its data
// is ≈ 8 MB an idle volunteer would keep resident); in a process whose zone is
// $TZ it must say exactly what Intl says for that zone named, through DST
// changes, half-hour shifts and zones at odd offsets (Node applies a TZ set
// at run time to Date).
import { afterAll, describe, expect, it } from 'vitest';
import { localTime } from '../../src/node/local-time.js';

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'America/St_Johns', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Chatham'];
const savedTz = process.env.TZ;

describe('localTime in the computer’s zone', () => {
  afterAll(() => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });

  for (const zone of ZONES) {
    it(`equals Intl's reading every 15 minutes of 2026 in ${zone}`, () => {
      process.env.TZ = zone;
      const from = Date.UTC(2025, 11, 31, 0, 7);
      const to = Date.UTC(2027, 0, 2);
      let differ = 0;
      let first: unknown;
      for (let t = from; t < to; t += 15 * 60_000) {
        const a = localTime(t);
        const b = localTime(t, zone); // Intl, the zone named
        if (JSON.stringify(a) !== JSON.stringify(b)) {
          differ++;
          first ??= { at: new Date(t).toISOString(), date: a, intl: b };
        }
      }
      expect(first).toBeUndefined();
      expect(differ).toBe(0);
      // The zone really was applied (not the same reading as UTC everywhere).
      if (zone !== 'UTC') expect(localTime(Date.UTC(2026, 6, 1, 12))).not.toEqual(localTime(Date.UTC(2026, 6, 1, 12), 'UTC'));
    });
  }
});
