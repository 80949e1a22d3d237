import type { Knex } from 'knex';
import { nowValue } from '../../db/dialect';
import type { TeamRole, TeamUserStatus } from '../../lib/constants';
import type { Actor } from '../context';

/** A person of an account as the request identity needs them (no secrets). */
export interface TeamMember {
  /** `team_users.id`. */
  id: number;
  /** The account (as `user_id` everywhere in the reference). */
  user_id: number;
  email: string;
  name: string;
  role: TeamRole;
  status: TeamUserStatus;
}

export const TEAM_MEMBER_COLUMNS = ['id', 'user_id', 'email', 'name', 'role', 'status'] as const;

export function teamMemberOf(row: Record<string, unknown>): TeamMember {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    email: String(row.email),
    name: String(row.name),
    role: row.role as TeamRole,
    status: row.status as TeamUserStatus,
  };
}

/** The actor of a request made by this person from the dashboard. */
export function userActor(member: Pick<TeamMember, 'id' | 'name' | 'role'>): Actor {
  return { type: 'user', id: member.id, name: member.name, role: member.role };
}

/** The name the account's original key pair has wherever keys are listed or named as actors. */
export const ORIGINAL_KEY_NAME = 'Original key';

/** The account's original key pair acts as the owner. */
export const ORIGINAL_KEY_ACTOR: Actor = { type: 'api_key', id: null, name: ORIGINAL_KEY_NAME, role: 'owner' };

/** Writes the owner of a new account: its sign-in address, name and password hash. */
export async function insertOwner(trx: Knex | Knex.Transaction, account: { id: number; email: string; email_key: string; name: string; password_hash: string }): Promise<void> {
  const now = nowValue();
  await trx('team_users').insert({
    user_id: account.id,
    email: account.email,
    email_key: account.email_key,
    name: account.name,
    role: 'owner',
    status: 'active',
    password_hash: account.password_hash,
    created_at: now,
    updated_at: now,
  });
}
