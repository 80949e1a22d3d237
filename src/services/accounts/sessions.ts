import { nowValue } from '../../db/dialect';
import { SESSION } from '../../lib/constants';
import { randomToken, sha256 } from '../../lib/crypto';
import type { Account } from './accounts';
import type { ServiceDeps } from '../context';

/** A signed-in dashboard session: the account and the CSRF token bound to it. */
export interface Session {
  account: Account;
  csrfToken: string;
  expiresAt: Date;
  /** True when this request moved the expiry on (the cookie's lifetime follows). */
  renewed: boolean;
}

export interface CreatedSession {
  /** The cookie value; the database keeps only its SHA-256, so a leaked table opens nothing. */
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

/**
 * Dashboard sessions in the database, so any number of web processes share them. Sliding
 * expiry, renewed at most once per `SESSION.renewAfterMs` so most requests cost one read.
 */
export function createSessionsService({ db }: Pick<ServiceDeps, 'db'>) {
  const expiry = (from = Date.now()) => new Date(from + SESSION.ttlMs);

  return {
    async create(accountId: number): Promise<CreatedSession> {
      const token = randomToken(32);
      const csrfToken = randomToken(32);
      const expiresAt = expiry();
      const now = nowValue();
      await db.transaction(async (trx) => {
        // Expired rows of every account go here, where a write happens anyway.
        await trx('sessions').where('expires_at', '<', now).delete();
        await trx('sessions').insert({
          id: sha256(token),
          account_id: accountId,
          csrf_token: csrfToken,
          expires_at: expiresAt.toISOString(),
          created_at: now,
          updated_at: now,
        });
      });
      return { token, csrfToken, expiresAt };
    },

    /** The live session of a cookie value with its live account, in one query. */
    async resolve(token: string): Promise<Session | undefined> {
      if (!token) return undefined;
      const id = sha256(token);
      const row = await db('sessions')
        .join('accounts', 'accounts.id', 'sessions.account_id')
        .where('sessions.id', id)
        .where('sessions.expires_at', '>', nowValue())
        .whereNull('accounts.deleted_at')
        .first(
          'sessions.csrf_token',
          'sessions.expires_at',
          'accounts.id',
          'accounts.name',
          'accounts.email',
          'accounts.public_key',
          'accounts.time_zone',
          'accounts.archive_id',
          'accounts.track_opens',
          'accounts.track_clicks',
        );
      if (!row) return undefined;
      let expiresAt = new Date(row.expires_at);
      const renewed = expiresAt.getTime() - Date.now() < SESSION.ttlMs - SESSION.renewAfterMs;
      if (renewed) {
        expiresAt = expiry();
        await db('sessions').where({ id }).update({ expires_at: expiresAt.toISOString(), updated_at: nowValue() });
      }
      const account: Account = {
        id: Number(row.id),
        name: row.name,
        email: row.email,
        public_key: row.public_key,
        time_zone: row.time_zone,
        archive_id: row.archive_id ?? null,
        track_opens: Number(row.track_opens) === 1 ? 1 : 0,
        track_clicks: Number(row.track_clicks) === 1 ? 1 : 0,
      };
      return { account, csrfToken: row.csrf_token, expiresAt, renewed };
    },

    async destroy(token: string): Promise<void> {
      if (token) await db('sessions').where({ id: sha256(token) }).delete();
    },

    /** Signs the account out everywhere (after a password change, for example). */
    async destroyAll(accountId: number): Promise<void> {
      await db('sessions').where({ account_id: accountId }).delete();
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;
