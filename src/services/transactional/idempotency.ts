import type { Knex } from 'knex';
import { insertId, isUniqueViolation, parseJson } from '../../db/dialect';
import { TRANSACTIONAL_LIMITS } from '../../lib/constants';
import { sha256 } from '../../lib/crypto';
import { MessageConflictError, ValidationError } from '../../lib/errors';
import { hasControlCharacters } from '../../lib/validation';

export const IDEMPOTENCY_WORDS = {
  otherBody: 'This Idempotency-Key was already used with a different request.',
  inProgress: 'A request with this Idempotency-Key is still in progress.',
} as const;

/** The request a key stands for: what it asks of which route, in a stable form. */
export function requestHash(route: string, body: unknown): string {
  return sha256(`${route}\n${stableJson(body)}`);
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The header's value checked: 1 to 256 printable characters. */
export function checkedKey(key: unknown): string | undefined {
  if (key === undefined) return undefined;
  const s = String(key);
  if (!s.length || s.length > TRANSACTIONAL_LIMITS.idempotencyKey || hasControlCharacters(s)) {
    throw ValidationError.of('Idempotency-Key', `The Idempotency-Key header must be 1 to ${TRANSACTIONAL_LIMITS.idempotencyKey} characters.`);
  }
  return s;
}

/**
 * Runs `handle` once per (account, key). The key's row is inserted and committed before the
 * request is handled, so the database's unique index decides between two requests that arrive
 * together: the second finds the row and is told the first is in progress. `handle` writes its
 * answer into the row in its own transaction (with the messages it writes), so an answer is
 * stored exactly when what it says happened. A failure deletes the row: the key may be used again.
 * A key's row is kept for TRANSACTIONAL_LIMITS.idempotencyHours; one in progress longer than
 * idempotencyStaleMs was abandoned by a process that died, and is taken over.
 */
export async function withIdempotency<T>(
  db: Knex,
  scope: { userId: number; key: string | undefined; hash: string; now: Date },
  handle: (remember: (trx: Knex.Transaction, answer: T) => Promise<void>) => Promise<T>,
): Promise<T> {
  const { userId, key, hash, now } = scope;
  if (key === undefined) return handle(async () => undefined);
  const expired = new Date(now.getTime() - TRANSACTIONAL_LIMITS.idempotencyHours * 3_600_000).toISOString();
  const stale = new Date(now.getTime() - TRANSACTIONAL_LIMITS.idempotencyStaleMs).toISOString();
  const mine = () => db('idempotency_keys').where({ user_id: userId, idempotency_key: key });
  const insert = () => insertId(db, 'idempotency_keys', { user_id: userId, idempotency_key: key, request_hash: hash, response: null, created_at: now.toISOString() });
  let id: number;
  try {
    // A new key (the usual case) costs this one statement; an old row is looked at only on a conflict.
    id = await insert();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // Expired, or abandoned by a process that died: the key is free again (the unique index still
    // decides between two requests taking it over together).
    const freed = await mine()
      .where((q) => q.where('created_at', '<', expired).orWhere((p) => p.whereNull('response').where('created_at', '<', stale)))
      .delete();
    if (freed) id = await insert().catch((again: unknown) => {
      if (isUniqueViolation(again)) throw new MessageConflictError(IDEMPOTENCY_WORDS.inProgress);
      throw again;
    });
    else {
      const existing = await mine().first('request_hash', 'response');
      if (!existing) throw new MessageConflictError(IDEMPOTENCY_WORDS.inProgress);
      if (existing.request_hash !== hash) throw new MessageConflictError(IDEMPOTENCY_WORDS.otherBody);
      if (existing.response === null) throw new MessageConflictError(IDEMPOTENCY_WORDS.inProgress);
      return parseJson<T>(existing.response, undefined as T);
    }
  }
  try {
    return await handle(async (trx, answer) => {
      await trx('idempotency_keys').where({ id }).update({ response: JSON.stringify(answer) });
    });
  } catch (err) {
    await db('idempotency_keys').where({ id }).whereNull('response').delete();
    throw err;
  }
}
