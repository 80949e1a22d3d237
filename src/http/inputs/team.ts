import { LIMITS, TEAM_ROLES, TEAM_USER_STATUSES, TeamRole, TeamUserStatus } from '../../lib/constants';
import type { InviteInput, TeamUserChange } from '../../services/accounts/team-users';
import { field } from '../validation';

/** Roles a person can be invited with: ownership is handed over, never given by invitation. */
export const INVITED_ROLES = TEAM_ROLES.filter((role) => role !== 'owner');

/** Shared with the dashboard's Team page. */
export const inviteRules = () => [
  field('email').required().email().maxLength(LIMITS.string),
  field('role').required().oneOf(INVITED_ROLES),
  field('name').optional().string().maxLength(LIMITS.string),
];

export const teamUserChangeRules = () => [
  field('role').optional().oneOf(TEAM_ROLES),
  field('status').optional().oneOf(TEAM_USER_STATUSES.filter((status) => status !== 'invited')),
];

export const apiKeyRules = () => [field('name').required().string().maxLength(LIMITS.string), field('role').required().oneOf(TEAM_ROLES)];

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

export function inviteInput(body: Record<string, unknown>): InviteInput {
  return { email: text(body.email), role: text(body.role) as TeamRole, name: text(body.name) || undefined };
}

export function teamUserChange(body: Record<string, unknown>): TeamUserChange {
  return {
    ...(text(body.role) ? { role: text(body.role) as TeamRole } : {}),
    ...(text(body.status) ? { status: text(body.status) as TeamUserStatus } : {}),
  };
}

export function apiKeyInput(body: Record<string, unknown>): { name: string; role: TeamRole } {
  return { name: text(body.name), role: text(body.role) as TeamRole };
}
