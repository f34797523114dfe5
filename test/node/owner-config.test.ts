// The operator's configuration as volunteers receive it: signed by the
// manager's key and verified against the manager's peer id, so no one in
// between (a relay, a forwarding peer) can put another contact URL into the
// volunteers' User-Agent; and the manager's per-volunteer record of what the
// owners let their volunteers do.
import { describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { signOrder, type TaskOrder } from '../../src/dht/signing.js';
import { checkContactUrl, ConfigSignatureError, signOperatorConfig, verifyOperatorConfig, type OperatorConfig } from '../../src/dht/volunteer-state.js';
import { VolunteerStates } from '../../src/manager/volunteer-states.js';

async function manager() {
  const key = await generateKeyPair('Ed25519');
  return { key, id: peerIdFromPrivateKey(key).toString() };
}

describe("the operator's signed configuration", () => {
  it('verifies against the manager id; a swapped URL, another signer, another issuer or an order signature are refused', async () => {
    const m = await manager();
    const cfg: OperatorConfig = { v: 1, issuer: m.id, issuedAt: Date.now(), contactUrl: 'https://crawl.example.org/about' };
    const signed = await signOperatorConfig(cfg, m.key);
    expect(await verifyOperatorConfig(signed, m.id)).toEqual(cfg);

    const swapped = { ...signed, payload: signed.payload.replace('crawl.example.org', 'evil.example.net') };
    await expect(verifyOperatorConfig(swapped, m.id)).rejects.toThrow(ConfigSignatureError);

    const other = await manager();
    const forged = await signOperatorConfig(cfg, other.key); // issuer says m, key is not m's
    await expect(verifyOperatorConfig(forged, m.id)).rejects.toThrow(/bad signature/);
    await expect(verifyOperatorConfig(await signOperatorConfig({ ...cfg, issuer: other.id }, other.key), m.id)).rejects.toThrow(/not the manager/);

    // The same key signs task orders: an order's signature over these bytes is not a configuration's.
    const asOrder = await signOrder(cfg as unknown as TaskOrder, m.key);
    await expect(verifyOperatorConfig(asOrder, m.id)).rejects.toThrow(/bad signature/);

    for (const bad of [null, {}, { payload: 'x', sig: '' }, { payload: '{"v":1}', sig: 'AAAA' }]) await expect(verifyOperatorConfig(bad, m.id)).rejects.toThrow(ConfigSignatureError);
  });

  it('takes only contact URLs that fit a User-Agent comment', async () => {
    expect(checkContactUrl('https://crawl.example.org/about')).toBe('https://crawl.example.org/about');
    for (const bad of ['ftp://x.example/', 'not a url', 'https://x.example/a(b)', 'https://x.example/a;b', `https://x.example/${'a'.repeat(200)}`]) expect(() => checkContactUrl(bad)).toThrow();
    const m = await manager();
    const signed = await signOperatorConfig({ v: 1, issuer: m.id, issuedAt: 0, contactUrl: 'https://x.example/a;b' }, m.key);
    await expect(verifyOperatorConfig(signed, m.id)).rejects.toThrow(/contactUrl/);
  });
});

describe("the manager's record of volunteers' states", () => {
  it('keeps the last report per identity; paused ones are excluded from routing and counted per reason', () => {
    let now = 1000;
    const s = new VolunteerStates(() => now);
    s.note('a', { state: 'paused', reasons: ['owner'], since: 1 });
    s.note('b', { state: 'paused', reasons: ['cap', 'schedule'], since: 2 });
    s.note('c', { state: 'running', reasons: [], since: 3 });
    expect([...s.paused()].sort()).toEqual(['a', 'b']);
    expect(s.counts()).toEqual({ running: 1, paused: 2, reasons: { owner: 1, cap: 1, schedule: 1, battery: 0, busy: 0 } });
    now = 2000;
    s.note('a', { state: 'running', reasons: [], since: 1500 });
    expect([...s.paused()]).toEqual(['b']);
    expect(s.get('a')).toEqual({ state: 'running', reasons: [], since: 1500, reportedAt: 2000 });
    expect(s.get('nobody')).toBeNull();
  });
});
