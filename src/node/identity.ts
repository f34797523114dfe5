// A volunteer's persistent identity: an Ed25519 libp2p key kept in the data
// directory (mode 0600, directory 0700), so the peer id survives restarts.
import { mkdirSync, readFileSync, writeFileSync, statSync, chmodSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys';
import type { PrivateKey } from '@libp2p/interface';

export const IDENTITY_FILE = 'identity.key';

/** The per-user default data directory. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return join(env.LOCALAPPDATA ?? env.APPDATA ?? join(homedir(), 'AppData', 'Local'), 'volcrawl');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'volcrawl');
  const xdg = env.XDG_DATA_HOME;
  return join(xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.local', 'share'), 'volcrawl');
}

export class IdentityError extends Error {
  override name = 'IdentityError';
}

/** Loads the key from `dataDir`, creating directory and key on first run. */
export async function loadOrCreateIdentity(dataDir: string): Promise<{ key: PrivateKey; created: boolean; path: string }> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, IDENTITY_FILE);
  if (existsSync(path)) {
    if (process.platform !== 'win32') {
      const mode = statSync(path).mode & 0o777;
      if ((mode & 0o077) !== 0) chmodSync(path, 0o600);
    }
    let key: PrivateKey;
    try {
      key = privateKeyFromProtobuf(new Uint8Array(readFileSync(path)));
    } catch (err) {
      throw new IdentityError(`${path} is not a libp2p private key (${(err as Error).message}); move it away to create a new identity`);
    }
    return { key, created: false, path };
  }
  const key = await generateKeyPair('Ed25519');
  writeFileSync(path, privateKeyToProtobuf(key), { mode: 0o600, flag: 'wx' });
  return { key, created: true, path };
}
