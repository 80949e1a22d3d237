import type { Knex } from 'knex';
import { randomToken } from '../../lib/crypto';

const KEY = 'hmac_secret';

/**
 * The HMAC secret for tokens in links: APP_SECRET when configured, otherwise one generated on
 * first start and kept in app_settings, so links stay valid across restarts and every process
 * (web and workers) signs alike. Concurrent first starts agree: the first insert wins.
 */
export async function ensureAppSecret(db: Knex, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  await db('app_settings').insert({ key: KEY, value: randomToken(32) }).onConflict('key').ignore();
  const row = await db('app_settings').where({ key: KEY }).first('value');
  return String(row.value);
}
