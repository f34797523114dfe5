import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { defaultDataDir, IdentityError, loadOrCreateIdentity } from '../../src/node/identity.js';
import { BootstrapError, parseBootstrap } from '../../src/node/node.js';
import { parseRate } from '../../src/node/join.js';
import { formatStatus } from '../../src/node/status.js';

describe('identity', () => {
  it('creates a 0600 key once and keeps the peer id across restarts', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'volcrawl-id-')), 'data');
    const a = await loadOrCreateIdentity(dir);
    expect(a.created).toBe(true);
    if (process.platform !== 'win32') {
      expect(statSync(a.path).mode & 0o777).toBe(0o600);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
    }
    const b = await loadOrCreateIdentity(dir);
    expect(b.created).toBe(false);
    expect(peerIdFromPrivateKey(b.key).toString()).toBe(peerIdFromPrivateKey(a.key).toString());
  });

  it('refuses a corrupt key file instead of silently replacing it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'volcrawl-id-'));
    writeFileSync(join(dir, 'identity.key'), 'not a key');
    await expect(loadOrCreateIdentity(dir)).rejects.toThrow(IdentityError);
  });

  it('uses a per-user default directory', () => {
    expect(defaultDataDir({ XDG_DATA_HOME: '/x/share' }, 'linux')).toBe('/x/share/volcrawl');
    expect(defaultDataDir({}, 'linux')).toMatch(/\.local\/share\/volcrawl$/);
  });
});

describe('join flags', () => {
  it('rejects malformed bootstrap addresses and ones without a peer id', () => {
    expect(() => parseBootstrap(['garbage'])).toThrow(BootstrapError);
    expect(() => parseBootstrap(['/ip4/127.0.0.1/tcp/4001'])).toThrow(/p2p/);
    expect(parseBootstrap(['/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWAQCNuVmJWQh1QSNsivPFbticPmqnKu9T5AwD9Hw5YANF'])).toHaveLength(1);
  });

  it('parses bandwidth rates', () => {
    expect(parseRate('500k')).toBe(500_000);
    expect(parseRate('2M')).toBe(2_000_000);
    expect(parseRate('1234')).toBe(1234);
    expect(() => parseRate('fast')).toThrow();
  });

  it('formats a status line that fits the terminal', () => {
    const line = formatStatus({
      peerId: '12D3KooWAQCNuVmJWQh1QSNsivPFbticPmqnKu9T5AwD9Hw5YANF', peers: 4, crawlersKnown: 3, coord: [12.3, -4], height: 5, error: 0.2,
      running: 1, queued: 2, free: 7, accepted: 9, forwarded: 1, rejected: 0, pages: 120, bytes: 3_500_000, bandwidth: 12_000, uploadsOk: 3, uploadsFailed: 0,
    }, 200);
    expect(line).toContain('peers 4');
    expect(line).toContain('err 20%');
    expect(line).toContain('1 running 2 queued');
    expect(formatStatus({ ...JSON.parse('{}'), peerId: 'x', peers: 0, crawlersKnown: 0, coord: [0], height: 0, error: 1, running: 0, queued: 0, free: 0, accepted: 0, forwarded: 0, rejected: 0, pages: 0, bytes: 0, bandwidth: 0, uploadsOk: 0, uploadsFailed: 0 }, 40).length).toBeLessThanOrEqual(40);
  });
});
