import type { Knex } from 'knex';
import { nowValue } from '../../db/dialect';
import { SESSION, TeamRole } from '../../lib/constants';
import { randomToken, sha256 } from '../../lib/crypto';
import type { Account } from './accounts';
import type { Actor } from '../context';
import { TeamMember, teamMemberOf, userActor } from './team-identity';

import type { ServiceDeps } from '../context';

/** A signed-in dashboard session: the account, the person and the CSRF token bound to it. */
export interface Session {
  account: Account;
  /** The signed-in person of the account. */
  member: TeamMember;
  actor: Actor;
  csrfToken: string;
  expiresAt: Date;
  /** True when this request moved the expiry on (the cookie's lifetime follows). */
  renewed: boolean;
  /** The account requires two-step sign-in and this person has not turned it on. */
  mustEnrolTwoFactor: boolean;
}

export interface CreatedSession {
  /** The cookie value; the database keeps only its SHA-256, so a leaked table opens nothing. */
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

/** Where a session was opened from, shown in the person's list of sessions. */
export interface SessionOrigin {
  ip?: string;
  userAgent?: string;
}

/** One of a person's sessions, as their list shows it. */
export interface SessionListed {
  /** A handle for ending it: not the cookie value, nor its stored hash. */
  id: string;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  expires_at: string;
  current: boolean;
}

/** Ends every session of a person but the one of `keepToken` (the browser that asked), inside the caller's transaction. */
export async function endOtherSessions(trx: Knex, teamUserId: number, keepToken: string): Promise<void> {
  await trx('sessions').where({ team_user_id: teamUserId }).whereNot({ id: sha256(keepToken) }).delete();
}

/** The public handle of a session: derived from its stored hash, useless as a cookie. */
function handleOf(storedId: string): string {
  return sha256(`session-handle:${storedId}`).slice(0, 32);
}

/**
 * Dashboard sessions in the database, so any number of web processes share them. Sliding
 * expiry, renewed at most once per `SESSION.renewAfterMs` so most requests cost one read.
 */
export function createSessionsService({ db }: Pick<ServiceDeps, 'db'>) {
  const expiry = (from = Date.now()) => new Date(from + SESSION.ttlMs);

  return {
    async create(member: Pick<TeamMember, 'id' | 'user_id'>, origin: SessionOrigin = {}): Promise<CreatedSession> {
      const token = randomToken(32);
      const csrfToken = randomToken(32);
      const expiresAt = expiry();
      const now = nowValue();
      await db.transaction(async (trx) => {
        // Expired rows of every account go here, where a write happens anyway.
        await trx('sessions').where('expires_at', '<', now).delete();
        await trx('sessions').insert({
          id: sha256(token),
          account_id: member.user_id,
          team_user_id: member.id,
          ip: origin.ip?.slice(0, 64) ?? null,
          user_agent: origin.userAgent?.slice(0, 255) ?? null,
          csrf_token: csrfToken,
          expires_at: expiresAt.toISOString(),
          created_at: now,
          updated_at: now,
        });
      });
      return { token, csrfToken, expiresAt };
    },

    /** The live session of a cookie value with its live account and active person, in one query. */
    async resolve(token: string): Promise<Session | undefined> {
      if (!token) return undefined;
      const id = sha256(token);
      const row = await db('sessions')
        .join('accounts', 'accounts.id', 'sessions.account_id')
        .join('team_users', 'team_users.id', 'sessions.team_user_id')
        .where('sessions.id', id)
        .where('sessions.expires_at', '>', nowValue())
        .where('team_users.status', 'active')
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
          'team_users.id as member_id',
          'team_users.email as member_email',
          'team_users.name as member_name',
          'team_users.role as member_role',
          'team_users.status as member_status',
          'accounts.two_factor_required',
          'team_users.totp_enabled_at',
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
      const member = teamMemberOf({
        id: row.member_id,
        user_id: row.id,
        email: row.member_email,
        name: row.member_name,
        role: row.member_role as TeamRole,
        status: row.member_status,
      });
      const mustEnrolTwoFactor = Number(row.two_factor_required) === 1 && !row.totp_enabled_at;
      return { account, member, actor: userActor(member), csrfToken: row.csrf_token, expiresAt, renewed, mustEnrolTwoFactor };
    },

    async destroy(token: string): Promise<void> {
      if (token) await db('sessions').where({ id: sha256(token) }).delete();
    },

    /** A person's live sessions, newest first; `current` marks the one of this cookie. */
    async list(teamUserId: number, currentToken: string): Promise<SessionListed[]> {
      const current = currentToken ? sha256(currentToken) : '';
      const rows = await db('sessions')
        .where({ team_user_id: teamUserId })
        .where('expires_at', '>', nowValue())
        .orderBy('created_at', 'desc')
        .select('id', 'ip', 'user_agent', 'created_at', 'expires_at');
      return rows.map((row) => ({
        id: handleOf(row.id),
        ip: row.ip ?? null,
        user_agent: row.user_agent ?? null,
        created_at: new Date(row.created_at).toISOString(),
        expires_at: new Date(row.expires_at).toISOString(),
        current: row.id === current,
      }));
    },

    /** Ends one of a person's sessions by its handle; false when it is not theirs or gone. */
    async end(teamUserId: number, handle: string): Promise<boolean> {
      const rows = await db('sessions').where({ team_user_id: teamUserId }).select('id');
      const row = rows.find((r) => handleOf(r.id) === handle);
      if (!row) return false;
      await db('sessions').where({ id: row.id }).delete();
      return true;
    },

    /** Signs a person out everywhere (after a password change, or when they ask). */
    async destroyAllOf(teamUserId: number): Promise<void> {
      await db('sessions').where({ team_user_id: teamUserId }).delete();
    },

    /** Signs every person of the account out (the account is closed, for example). */
    async destroyAll(accountId: number): Promise<void> {
      await db('sessions').where({ account_id: accountId }).delete();
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;
