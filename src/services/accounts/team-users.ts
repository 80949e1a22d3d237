import { nowValue } from '../../db/dialect';
import { emailKey } from '../../lib/email-key';
import { LIMITS, PASSWORD_MIN } from '../../lib/constants';
import { hashPassword, verifyPassword } from '../../lib/crypto';
import { FieldErrors, ValidationError } from '../../lib/errors';
import { messages, throwIfAny } from '../../lib/validation';
import type { ServiceDeps } from '../context';
import { TEAM_MEMBER_COLUMNS, TeamMember, teamMemberOf } from './team-identity';

/** Hashed when the address is unknown, so the time taken does not tell whether it is. */
const NO_HASH = 'scrypt$32768$8$1$AAAA$AAAA';

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The rules of a new password (and its confirmation), as the reference words them. */
export function checkNewPassword(input: { password: unknown; password_confirmation: unknown }, errors: FieldErrors): string {
  const next = text(input.password);
  if (!next) errors.password = [messages.required('password')];
  else if (next.length < PASSWORD_MIN) errors.password = [messages.min('password', PASSWORD_MIN)];
  else if (next.length > LIMITS.string) errors.password = [messages.max('password', LIMITS.string)];
  else if (next !== text(input.password_confirmation)) errors.password_confirmation = ['The password confirmation does not match.'];
  return next;
}

/** The people of accounts: who signs in, with which password. */
export function createTeamUsersService({ db }: Pick<ServiceDeps, 'db'>) {
  return {
    /**
     * Email and password sign-in: the active person with this address, or undefined (an
     * invited or disabled person, or a live account's person only).
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
