import type { Knex } from 'knex';

/**
 * Whether a signed webhook timestamp (seconds since the epoch, as the provider sends it) is
 * fresh at `now`: at most `maxAgeMs` old and at most `maxAheadMs` ahead (clock skew).
 */
export function isFresh(seconds: unknown, now: Date, maxAgeMs: number, maxAheadMs: number): boolean {
  const text = String(seconds ?? '');
  if (!/^\d{1,12}$/.test(text)) return false;
  const age = now.getTime() - Number(text) * 1000;
  return age <= maxAgeMs && age >= -maxAheadMs;
}

/**
 * Takes a provider's signature token once, in the database so every process shares it: true
 * the first time, false for a replay. The insert on the primary key is the check, so two
 * concurrent replays cannot both pass. Tokens are kept until `expiresAt` (later than their
 * timestamp is accepted) and the expired ones are deleted here, so the table holds only the
 * tokens of the last few minutes.
 */
export async function takeToken(db: Knex, provider: string, token: string, now: Date, expiresAt: Date): Promise<boolean> {
  await db('provider_webhook_tokens').where('expires_at', '<', now.toISOString()).delete();
  const inserted = await db('provider_webhook_tokens')
    .insert({ provider, token, expires_at: expiresAt.toISOString() })
    .onConflict(['provider', 'token'])
    .ignore()
    .returning('token');
  return inserted.length > 0;
}

/** Gives a token back when what it authorised could not be recorded, so the provider's retry is not taken for a replay. */
export async function returnToken(db: Knex, provider: string, token: string): Promise<void> {
  await db('provider_webhook_tokens').where({ provider, token }).delete();
}
