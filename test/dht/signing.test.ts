import { describe, expect, it } from 'vitest';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { checkHandoverChain, signHandover, signOrder, verifyEnvelope, verifyHandoverLink, TaskSignatureError, type TaskOrder } from '../../src/dht/signing.js';

const parseTask = (j: unknown) => {
  if (typeof j !== 'object' || j === null || typeof (j as { id?: unknown }).id !== 'string') throw new Error('bad task');
  return j as { id: string };
};

async function setup() {
  const key = await generateKeyPair('Ed25519');
  const id = peerIdFromPrivateKey(key).toString();
  const storage = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString();
  const order: TaskOrder = {
    v: 1,
    id: 't1',
    issuer: id,
    issuedAt: Date.now(),
    expiresAt: Date.now() + 60_000,
    host: 'example.com',
    storage: { peer: storage, protocol: '/volcrawl/upload/1.0.0' },
    task: { id: 't1' },
  };
  return { key, id, order };
}

describe('task signing', () => {
  it('accepts an order signed by the manager', async () => {
    const { key, id, order } = await setup();
    const env = await signOrder(order, key);
    const v = await verifyEnvelope(env, { manager: id, parseTask });
    expect(v.task.id).toBe('t1');
    expect(v.order.host).toBe('example.com');
  });

  it('rejects a forged signature, a tampered payload, another issuer and an expired order', async () => {
    const { key, id, order } = await setup();
    const other = await generateKeyPair('Ed25519');
    const forged = await signOrder(order, other);
    await expect(verifyEnvelope(forged, { manager: id, parseTask })).rejects.toThrow(TaskSignatureError);
    const env = await signOrder(order, key);
    const tampered = { ...env, payload: env.payload.replace('example.com', 'evil.example') };
    await expect(verifyEnvelope(tampered, { manager: id, parseTask })).rejects.toThrow(/bad signature/);
    const otherOrder = await signOrder({ ...order, issuer: peerIdFromPrivateKey(other).toString() }, other);
    await expect(verifyEnvelope(otherOrder, { manager: id, parseTask })).rejects.toThrow(/not the manager/);
    const expired = await signOrder({ ...order, expiresAt: Date.now() - 1 }, key);
    await expect(verifyEnvelope(expired, { manager: id, parseTask })).rejects.toThrow(/expired/);
    await expect(verifyEnvelope({ payload: env.payload }, { manager: id, parseTask })).rejects.toThrow(/malformed/);
    await expect(verifyEnvelope('nonsense', { manager: id, parseTask })).rejects.toThrow(/malformed/);
  });
});

describe('task hand-over', () => {
  it('a chain from the holder to the uploader verifies; anything else is named', async () => {
    const keys = await Promise.all([0, 1, 2].map(() => generateKeyPair('Ed25519')));
    const [a, b, c] = keys.map((k) => peerIdFromPrivateKey(k).toString()) as [string, string, string];
    const ab = await signHandover(keys[0]!, a, 't1', b);
    const bc = await signHandover(keys[1]!, b, 't1', c);
    expect(await verifyHandoverLink(ab)).toBe(true);
    expect(await checkHandoverChain([ab], 't1', a, b)).toBeUndefined();
    expect(await checkHandoverChain([ab, bc], 't1', a, c)).toBeUndefined();
    expect(await checkHandoverChain([ab, bc], 't1', b, c)).toBeUndefined(); // a->b already known
    expect(await checkHandoverChain([ab], 't1', c, b)).toBe('no hand-over from the holder');
    expect(await checkHandoverChain([ab], 't1', a, c)).toBe('hand-over is to another peer');
    expect(await checkHandoverChain([ab], 't2', a, b)).toBe('hand-over is for another task');
    expect(await checkHandoverChain([ab, { ...bc, from: a }], 't1', a, c)).toBe('hand-over chain is broken');
    expect(await checkHandoverChain([{ ...ab, to: c }], 't1', a, c)).toBe('bad hand-over signature');
    const byC = await signHandover(keys[2]!, c, 't1', b);
    expect(await checkHandoverChain([{ ...byC, from: a }], 't1', a, b)).toBe('bad hand-over signature');
  });
});
