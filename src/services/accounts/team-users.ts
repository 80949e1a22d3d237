import type { Knex } from 'knex';
import { insertId, nowValue } from '../../db/dialect';
import { listPage, Paging } from '../../db/paging';
import { emailKey } from '../../lib/email-key';
import { LIMITS, PASSWORD_MIN, TeamRole, TeamTokenPurpose, TeamUserStatus } from '../../lib/constants';
import { hashPassword, sha256, verifyPassword } from '../../lib/crypto';
import { ConflictError, FieldErrors, NotFoundError, ServiceUnavailableError, ValidationError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import { messages, throwIfAny } from '../../lib/validation';
import type { Ctx, ServiceDeps } from '../context';
import { DeliveredNow, deliverNow, queueSystemMail } from '../delivery/notices';
import { queuedTeamLink } from '../delivery/notices';
import { AuditEntry, recordAudit } from '../shared/audit-writer';
import { capKeysOf, keysMadeBy, revokeKeysOf } from './api-keys';
import { TEAM_MEMBER_COLUMNS, TeamMember, teamMemberOf, userActor } from './team-identity';

/** Hashed when the address is unknown, so the time taken does not tell whether it is. */
const NO_HASH = 'scrypt$32768$8$1$AAAA$AAAA';

/** A person of the account as `GET /users` lists them. */
export interface TeamUserRecord {
  /** The person (`team_users.id`). */
  id: number;
  /** The account, as everywhere in the reference. */
  user_id: number;
  email: string;
  name: string;
  role: TeamRole;
  status: TeamUserStatus;
  /** 1 when the person signs in with a second factor. */
  two_factor: 0 | 1;
  /** 1 when the person has signed in through single sign-on. */
  sso: 0 | 1;
  last_sign_in_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface InviteInput {
  email: string;
  role: TeamRole;
  name?: string;
}

export interface TeamUserChange {
  role?: TeamRole;
  status?: TeamUserStatus;
}

/**
 * Whether the person signs in with a second factor or through single sign-on. Two-factor
 * sign-in and single sign-on keep their own columns; until they exist, both are 0.
 */
function signInFlags(row: Record<string, unknown>): { two_factor: 0 | 1; sso: 0 | 1 } {
  return { two_factor: row.totp_enabled_at ? 1 : 0, sso: row.sso_subject ? 1 : 0 };
}

export function teamUserRecord(row: Record<string, unknown>): TeamUserRecord {
  return {
    ...teamMemberOf(row),
    ...signInFlags(row),
    last_sign_in_at: timestamp(row.last_sign_in_at),
    created_at: timestamp(row.created_at) as string,
    updated_at: timestamp(row.updated_at) as string,
  };
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The rules of a new password (and its confirmation), as the reference words them. */
export function checkNewPassword(input: { password?: unknown; password_confirmation?: unknown }, errors: FieldErrors): string {
  const next = text(input.password);
  if (!next) errors.password = [messages.required('password')];
  else if (next.length < PASSWORD_MIN) errors.password = [messages.min('password', PASSWORD_MIN)];
  else if (next.length > LIMITS.string) errors.password = [messages.max('password', LIMITS.string)];
  else if (next !== text(input.password_confirmation)) errors.password_confirmation = ['The password confirmation does not match.'];
  return next;
}

/**
 * What a change of role or status says in the audit log: one entry for the request, named after
 * the role change when there is one (a status changed with it is said in its summary), with what
 * it did to the person's keys.
 */
function teamChangeEntry(member: TeamMember, change: TeamUserChange, keys: string): AuditEntry {
  const base = { recordType: 'user', recordId: member.id };
  const roleChanged = !!change.role && change.role !== member.role;
  const statusChanged = !!change.status && change.status !== member.status;
  const statusAction = change.status === 'disabled' ? 'user.disabled' : 'user.enabled';
  if (roleChanged) {
    const status = statusChanged ? `, ${change.status === 'disabled' ? 'disabled' : 'enabled'}` : '';
    return { ...base, action: 'user.role_changed', summary: `${member.email}: ${member.role} → ${change.role}${status}${keys}` };
  }
  if (statusChanged) return { ...base, action: statusAction, summary: `${member.email}${keys}` };
  return { ...base, action: 'user.updated', summary: `${member.email}: unchanged` };
}

/** An actor-less call is the service itself, which may do what the owner may. */
const roleOf = (ctx: Ctx): TeamRole => ctx.actor?.role ?? 'owner';

/** The people of accounts: who they are, how they join, sign in, and leave. */
export function createTeamUsersService(deps: Pick<ServiceDeps, 'db' | 'config' | 'mail' | 'logger' | 'secret'> & { forgetKey?: (publicKey: string) => void }) {
  const { db, config } = deps;
  /** Keys revoked or lowered stop working as they were in this process at once (others within API_KEY_CACHE_SECONDS). */
  const forgetKeys = (publicKeys: string[]) => publicKeys.forEach((key) => deps.forgetKey?.(key));
  const ofAccount = (ctx: Ctx, trx: Knex = db) => trx('team_users').where({ user_id: ctx.userId });

  /** Mails an invitation or a reset link now; the worker retries a mail server that is away. */
  /** Queues the link's mail (with its audit entry, when the mail is a change someone made) and delivers it now. */
  async function mailLink(member: Pick<TeamMember, 'id' | 'user_id' | 'email'>, purpose: TeamTokenPurpose, audit?: { ctx: Ctx; entry: AuditEntry }): Promise<DeliveredNow> {
    const account = await db('accounts').where({ id: member.user_id }).first('name');
    const mail = queuedTeamLink(config.mailFrom, member.email, { teamUserId: member.id, purpose, accountName: String(account?.name ?? '') });
    const id = audit
      ? await db.transaction(async (trx) => {
        const queued = await queueSystemMail(trx, member.user_id, mail);
        await recordAudit(trx, audit.ctx, audit.entry);
        return queued;
      })
      : await queueSystemMail(db, member.user_id, mail);
    return deliverNow({ db, mail: deps.mail, logger: deps.logger, secret: deps.secret, baseUrl: config.baseUrl, bounceDomain: config.bounceDomain, smtpUrl: config.smtpUrl }, id);
  }

  async function mailInvitation(member: Pick<TeamMember, 'id' | 'user_id' | 'email'>, audit?: { ctx: Ctx; entry: AuditEntry }): Promise<void> {
    const outcome = await mailLink(member, 'invite', audit);
    if (outcome === 'retry' || outcome === 'bounce') {
      throw new ServiceUnavailableError('The invitation is saved, but its mail could not be sent; send it again in a moment.');
    }
  }

  /** The live token of a link, with its person; undefined when unknown, spent or expired. */
  async function tokenOf(purpose: TeamTokenPurpose, token: string): Promise<{ tokenId: number; member: TeamMember } | undefined> {
    if (!token) return undefined;
    const row = await db('team_user_tokens')
      .join('team_users', 'team_users.id', 'team_user_tokens.team_user_id')
      .join('accounts', 'accounts.id', 'team_users.user_id')
      .where({ 'team_user_tokens.token_hash': sha256(token), 'team_user_tokens.purpose': purpose })
      .whereNull('team_user_tokens.used_at')
      .where('team_user_tokens.expires_at', '>', nowValue())
      .whereNull('accounts.deleted_at')
      .first(['team_user_tokens.id as token_id', ...TEAM_MEMBER_COLUMNS.map((c) => `team_users.${c}`)]);
    if (!row) return undefined;
    return { tokenId: Number(row.token_id), member: teamMemberOf(row) };
  }

  async function found(ctx: Ctx, id: number): Promise<TeamMember> {
    const row = await ofAccount(ctx).where({ id }).first(TEAM_MEMBER_COLUMNS);
    if (!row) throw new NotFoundError();
    return teamMemberOf(row);
  }

  return {
    /**
     * Email and password sign-in: the active person with this address, or undefined (an
     * invited or disabled person, a closed account, a wrong password).
     */
    async signIn(email: string, password: string): Promise<TeamMember | undefined> {
      const row = await db('team_users')
        .join('accounts', 'accounts.id', 'team_users.user_id')
        .where('team_users.email_key', emailKey(email))
        .whereNull('accounts.deleted_at')
        .first([...TEAM_MEMBER_COLUMNS.map((c) => `team_users.${c}`), 'team_users.password_hash']);
      const ok = await verifyPassword(password, row?.password_hash || NO_HASH);
      if (!row || !ok || !row.password_hash || row.status !== 'active') return undefined;
      await db('team_users').where({ id: row.id }).update({ last_sign_in_at: nowValue() });
      return teamMemberOf(row);
    },

    /** The account's owner. */
    async owner(accountId: number): Promise<TeamMember> {
      const row = await db('team_users').where({ user_id: accountId, role: 'owner' }).first(TEAM_MEMBER_COLUMNS);
      if (!row) throw new Error(`account ${accountId} has no owner`);
      return teamMemberOf(row);
    },

    async member(id: number): Promise<TeamMember | undefined> {
      const row = await db('team_users').where({ id }).first(TEAM_MEMBER_COLUMNS);
      return row ? teamMemberOf(row) : undefined;
    },

    async list(ctx: Ctx, paging?: Paging) {
      return listPage(ofAccount(ctx).select('*').orderBy('id', 'desc'), paging, teamUserRecord);
    },

    async get(ctx: Ctx, id: number): Promise<TeamUserRecord> {
      const row = await ofAccount(ctx).where({ id }).first();
      if (!row) throw new NotFoundError();
      return teamUserRecord(row);
    },

    /**
     * Adds a person as invited and mails them a link valid 7 days, where they choose a
     * password. An address that already signs in anywhere is taken.
     */
    async invite(ctx: Ctx, input: InviteInput): Promise<number> {
      const email = input.email.trim();
      const key = emailKey(email);
      if (input.role === 'owner') throw ValidationError.of('role', messages.selected('role'));
      if ((await db('team_users').where({ email_key: key }).first('id')) || (await db('accounts').where({ email_key: key }).first('id'))) {
        throw ValidationError.of('email', messages.taken('email'));
      }
      const now = nowValue();
      const id = await db.transaction(async (trx) => {
        const created = await insertId(trx, 'team_users', {
          user_id: ctx.userId,
          email,
          email_key: key,
          name: input.name?.trim() || email.split('@')[0],
          role: input.role,
          status: 'invited',
          password_hash: null,
          created_at: now,
          updated_at: now,
        });
        await recordAudit(trx, ctx, { action: 'user.invited', recordType: 'user', recordId: created, summary: `${email} as ${input.role}` }, now);
        return created;
      });
      await mailInvitation({ id, user_id: ctx.userId, email });
      return id;
    },

    /** A new invitation link (the earlier one stops working when it goes out). */
    async resendInvitation(ctx: Ctx, id: number): Promise<void> {
      const member = await found(ctx, id);
      if (member.status !== 'invited') throw new ConflictError('This person has already joined; there is no invitation to send again.');
      await mailInvitation(member, { ctx, entry: { action: 'user.invitation_resent', recordType: 'user', recordId: id, summary: member.email } });
    },

    /**
     * A new role or status. Handing ownership (`role: owner`) is the owner's alone, to an
     * active admin, who becomes the owner while the former owner becomes an admin. The
     * owner's own role and status change only that way. A disabled person is signed out, and the keys they made stop working until they are enabled again.
     */
    async update(ctx: Ctx, id: number, change: TeamUserChange): Promise<void> {
      const member = await found(ctx, id);
      if (change.status === 'invited' || (change.status === 'active' && member.status === 'invited')) {
        throw new ConflictError('An invited person becomes active by accepting the invitation.');
      }
      if (change.role === 'owner') {
        if (member.role === 'owner') return;
        if (roleOf(ctx) !== 'owner') throw new ConflictError('Only the owner can hand over ownership.');
        if (member.role !== 'admin' || member.status !== 'active' || (change.status && change.status !== 'active')) {
          throw new ConflictError('Ownership can be handed only to an active admin.');
        }
        const capped = await db.transaction(async (trx) => {
          const now = nowValue();
          const former = await ofAccount(ctx, trx).where({ role: 'owner' }).first('id');
          await ofAccount(ctx, trx).where({ role: 'owner' }).update({ role: 'admin', updated_at: now });
          await ofAccount(ctx, trx).where({ id }).update({ role: 'owner', updated_at: now });
          // The former owner is an admin now: so are the keys they made.
          const keys = former ? await capKeysOf(trx, ctx.userId, Number(former.id), 'admin') : { publicKeys: [], summary: '' };
          await recordAudit(trx, ctx, { action: 'user.ownership_transferred', recordType: 'user', recordId: id, summary: `Ownership handed to ${member.email}${keys.summary}` }, now);
          return keys.publicKeys;
        });
        forgetKeys(capped);
        return;
      }
      if (member.role === 'owner' && (change.role || change.status === 'disabled')) {
        throw new ConflictError("The owner's role and status change only when the owner hands ownership to an admin.");
      }
      if (change.status === 'disabled' && ctx.actor?.type === 'user' && ctx.actor.id === id) {
        throw new ConflictError('You cannot disable yourself; ask an admin or the owner.');
      }
      const patch: Record<string, unknown> = {};
      if (change.role) patch.role = change.role;
      if (change.status) patch.status = change.status;
      if (Object.keys(patch).length === 0) return;
      const capped = await db.transaction(async (trx) => {
        const now = nowValue();
        await ofAccount(ctx, trx).where({ id }).update({ ...patch, updated_at: now });
        if (change.status === 'disabled') await trx('sessions').where({ team_user_id: id }).delete();
        const keys = change.role ? await capKeysOf(trx, ctx.userId, id, change.role) : { publicKeys: [], summary: '' };
        await recordAudit(trx, ctx, teamChangeEntry(member, change, keys.summary), now);
        return change.status === 'disabled' ? await keysMadeBy(trx, ctx.userId, id) : keys.publicKeys;
      });
      forgetKeys(capped);
    },

    /** Removes a person (their sessions, links and the API keys they made go with them); never the owner. */
    async remove(ctx: Ctx, ids: number[]): Promise<void> {
      const id = ids[0] ?? 0;
      const member = await found(ctx, id);
      if (member.role === 'owner') throw new ConflictError('The owner cannot be removed; hand ownership to an admin first.');
      if (ctx.actor?.type === 'user' && ctx.actor.id === id) throw new ConflictError('You cannot remove yourself; ask an admin or the owner.');
      const revoked = await db.transaction(async (trx) => {
        await ofAccount(ctx, trx).where({ id }).delete();
        const keys = await revokeKeysOf(trx, ctx.userId, id);
        await recordAudit(trx, ctx, { action: 'user.deleted', recordType: 'user', recordId: id, summary: `${member.email}${keys.summary}` });
        return keys.publicKeys;
      });
      forgetKeys(revoked);
    },

    /** The invited person behind an invitation link, with the account's name; undefined when it does not work (any more). */
    async invitation(token: string): Promise<{ member: TeamMember; accountName: string } | undefined> {
      const found = await tokenOf('invite', token);
      if (!found || found.member.status !== 'invited') return undefined;
      const account = await db('accounts').where({ id: found.member.user_id }).first('name');
      return { member: found.member, accountName: String(account?.name ?? '') };
    },

    /** Accepts an invitation: the person's name and password; they are active from now on. */
    async acceptInvitation(token: string, input: { name?: unknown; password?: unknown; password_confirmation?: unknown }, ip?: string | null): Promise<TeamMember | undefined> {
      const errors: FieldErrors = {};
      const name = text(input.name).trim();
      if (name.length > LIMITS.string) errors.name = [messages.max('name', LIMITS.string)];
      const password = checkNewPassword(input, errors);
      const found = await tokenOf('invite', token);
      if (!found || found.member.status !== 'invited') return undefined;
      throwIfAny(errors);
      const passwordHash = await hashPassword(password);
      const now = nowValue();
      const taken = await db.transaction(async (trx) => {
        const spent = await trx('team_user_tokens').where({ id: found.tokenId }).whereNull('used_at').update({ used_at: now });
        if (!spent) return false;
        await trx('team_users')
          .where({ id: found.member.id, status: 'invited' })
          .update({ ...(name ? { name } : {}), password_hash: passwordHash, status: 'active', last_sign_in_at: now, updated_at: now });
        const joined = { ...found.member, ...(name ? { name } : {}) };
        await recordAudit(trx, { userId: joined.user_id, actor: userActor(joined), ip: ip ?? null }, { action: 'user.invitation_accepted', recordType: 'user', recordId: joined.id, summary: joined.email }, now);
        return true;
      });
      if (!taken) return undefined;
      return { ...found.member, ...(name ? { name } : {}), status: 'active' };
    },

    /**
     * Mails a password-reset link to the active person with this address, if there is one;
     * the caller answers the same either way, so the answer tells nobody who signs in here.
     */
    async requestReset(email: string): Promise<void> {
      const row = await db('team_users')
        .join('accounts', 'accounts.id', 'team_users.user_id')
        .where('team_users.email_key', emailKey(email.trim()))
        .where('team_users.status', 'active')
        .whereNull('accounts.deleted_at')
        .first(TEAM_MEMBER_COLUMNS.map((c) => `team_users.${c}`));
      if (row) await mailLink(teamMemberOf(row), 'reset');
    },

    /** Whether a reset link still works (the page asks before showing its form). */
    async resetWorks(token: string): Promise<boolean> {
      const found = await tokenOf('reset', token);
      return !!found && found.member.status === 'active';
    },

    /** Sets a new password from a reset link; the person's sessions all end. Undefined when the link does not work. */
    async resetPassword(token: string, input: { password?: unknown; password_confirmation?: unknown }, ip?: string | null): Promise<TeamMember | undefined> {
      const errors: FieldErrors = {};
      const password = checkNewPassword(input, errors);
      const found = await tokenOf('reset', token);
      if (!found || found.member.status !== 'active') return undefined;
      throwIfAny(errors);
      const passwordHash = await hashPassword(password);
      const now = nowValue();
      const done = await db.transaction(async (trx) => {
        const spent = await trx('team_user_tokens').where({ id: found.tokenId }).whereNull('used_at').update({ used_at: now });
        if (!spent) return false;
        await trx('team_users').where({ id: found.member.id }).update({ password_hash: passwordHash, updated_at: now });
        await trx('sessions').where({ team_user_id: found.member.id }).delete();
        const member = found.member;
        await recordAudit(trx, { userId: member.user_id, actor: userActor(member), ip: ip ?? null }, { action: 'user.password_reset', recordType: 'user', recordId: member.id, summary: 'By a mailed link' }, now);
        return true;
      });
      return done ? found.member : undefined;
    },

    /** A new password for the dashboard, given the current one. The caller signs the person's other sessions out. */
    async changePassword(id: number, input: { current_password: unknown; password: unknown; password_confirmation: unknown }): Promise<void> {
      const current = text(input.current_password);
      const errors: FieldErrors = {};
      if (!current) errors.current_password = [messages.required('current_password')];
      const next = checkNewPassword(input, errors);
      throwIfAny(errors);
      const row = await db('team_users').where({ id }).first('password_hash');
      if (!row?.password_hash || !(await verifyPassword(current, row.password_hash))) {
        throw ValidationError.of('current_password', 'The current password is incorrect.');
      }
      await db('team_users').where({ id }).update({ password_hash: await hashPassword(next), updated_at: nowValue() });
    },
  };
}

export type TeamUsersService = ReturnType<typeof createTeamUsersService>;
