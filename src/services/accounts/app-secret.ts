import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { randomToken } from '../../lib/crypto';

/** Where versions before the secret file kept the generated secret (moved out on first start). */
const LEGACY_KEY = 'hmac_secret';

/**
 * The HMAC secret for tokens in links and the key that seals stored webhook secrets:
 * APP_SECRET when configured, otherwise one generated on first start and kept in `file`
 * (mode 0600) beside the data, never in the database, so a copy of the database alone can
 * neither read the sealed secrets nor sign links. Every process of an install reads the same
 * file; processes on several hosts set APP_SECRET instead (docs/security.md).
 *
 * An install that kept the generated secret in app_settings moves it to the file on its first
 * start and then removes it from the table, so its links and sealed secrets keep working.
 * Concurrent first starts agree: the file is published whole by one link(2), the first wins.
 */
export async function ensureAppSecret(db: Knex, configured: string | undefined, file: string): Promise<string> {
  if (configured) return configured;
  const legacy = await db('app_settings').where({ key: LEGACY_KEY }).first('value');
  const secret = readSecret(file) ?? publishSecret(file, legacy ? String(legacy.value) : randomToken(32));
  if (legacy && String(legacy.value) === secret) await db('app_settings').where({ key: LEGACY_KEY }).delete();
  return secret;
}

/** The install's secret if it has one (APP_SECRET, or the file a start wrote); never makes one. */
export function existingAppSecret(configured: string | undefined, file: string): string | undefined {
  return configured || readSecret(file);
}

function readSecret(file: string): string | undefined {
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    return text || undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Writes `secret` to `file` unless another process did first; answers the file's secret. */
function publishSecret(file: string, secret: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const draft = `${file}.${process.pid}.${randomToken(6)}.tmp`;
  fs.writeFileSync(draft, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(draft, file);
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readSecret(file) ?? secret;
  } finally {
    fs.unlinkSync(draft);
  }
}
