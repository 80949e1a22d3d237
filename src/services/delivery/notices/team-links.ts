import type { Knex } from 'knex';
import { nowValue } from '../../../db/dialect';
import { TEAM_ROLE_DUTIES, TEAM_ROLE_NAMES, TEAM_TOKEN_TTL_MS, TeamRole, TeamTokenPurpose } from '../../../lib/constants';
import { randomToken, sha256 } from '../../../lib/crypto';
import { escapeHtml } from '../../../mail/template';

/** What the send ledger keeps of an invitation or reset mail: the person and why, never a token. */
export interface TeamLinkRef {
  teamUserId: number;
  purpose: TeamTokenPurpose;
  /** The account's name, said in the invitation. */
  accountName: string;
  /** Who invited the person (a person of the team; not said when a key or the service did). */
  invitedBy?: string;
}

const PATHS: Record<TeamTokenPurpose, string> = { invite: '/invitation', reset: '/reset-password' };

/** The link of an invitation (`/invitation/<token>`) or a password reset (`/reset-password/<token>`). */
export function teamLink(baseUrl: string, purpose: TeamTokenPurpose, token: string): string {
  return `${baseUrl}${PATHS[purpose]}/${encodeURIComponent(token)}`;
}

/** The ledger's form of the mail: no body, since the body carries the link, made when it goes out. */
export function queuedTeamLink(from: string | { name: string; address: string }, to: string, ref: TeamLinkRef) {
  const invited = ref.invitedBy ? `${ref.invitedBy} invited you to ${ref.accountName}` : `You are invited to ${ref.accountName}`;
  return { from, to, subject: ref.purpose === 'invite' ? invited : 'Reset your password', html: '', teamLink: ref };
}

/** The invitation's opening: who asks whom to do what (the role as it is when the mail goes out). */
function invitation(ref: TeamLinkRef, role: TeamRole): string {
  const as = `as ${/^[aeiou]/i.test(TEAM_ROLE_NAMES[role]) ? 'an' : 'a'} ${TEAM_ROLE_NAMES[role].toLowerCase()} (${TEAM_ROLE_DUTIES[role]})`;
  return ref.invitedBy ? `${ref.invitedBy} invited you to work in ${ref.accountName} ${as}.` : `You are invited to work in ${ref.accountName} ${as}.`;
}

/**
 * The body of an invitation or reset mail at the moment it is sent: a fresh single-use token
 * whose SHA-256 alone is stored, replacing the person's earlier unused link of the same kind.
 * Undefined when the mail is void: the person is gone, or no longer invited (an invitation)
 * or no longer active (a reset).
 */
export async function teamLinkBody(db: Knex, baseUrl: string, ref: TeamLinkRef): Promise<{ html: string; text: string } | undefined> {
  const person = await db('team_users').where({ id: ref.teamUserId }).first('status', 'name', 'role');
  if (!person || person.status !== (ref.purpose === 'invite' ? 'invited' : 'active')) return undefined;
  const token = randomToken(32);
  const now = new Date();
  await db.transaction(async (trx) => {
    // Expired links of everyone go here too, where a write happens anyway.
    await trx('team_user_tokens').where('expires_at', '<', now.toISOString()).delete();
    await trx('team_user_tokens').where({ team_user_id: ref.teamUserId, purpose: ref.purpose }).whereNull('used_at').delete();
    await trx('team_user_tokens').insert({
      team_user_id: ref.teamUserId,
      purpose: ref.purpose,
      token_hash: sha256(token),
      expires_at: new Date(now.getTime() + TEAM_TOKEN_TTL_MS[ref.purpose]).toISOString(),
      created_at: nowValue(),
    });
  });
  const link = teamLink(baseUrl, ref.purpose, token);
  const text =
    ref.purpose === 'invite'
      ? `Hello ${person.name},\n\n${invitation(ref, person.role as TeamRole)} Open this link within 7 days to choose your password and sign in:\n\n${link}\n\nIf you did not expect this, ignore this mail.`
      : `Hello ${person.name},\n\nOpen this link within an hour to choose a new password:\n\n${link}\n\nIf you did not ask for this, ignore this mail: your password stays as it is.`;
  const html = `<html><body>${text
    .split(/\n{2,}/)
    .map((p) => (p === link ? `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>` : `<p>${escapeHtml(p)}</p>`))
    .join('')}</body></html>`;
  return { html, text };
}
