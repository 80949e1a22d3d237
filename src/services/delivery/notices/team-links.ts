import type { Knex } from 'knex';
import { nowValue } from '../../../db/dialect';
import { TEAM_TOKEN_TTL_MS, TeamTokenPurpose } from '../../../lib/constants';
import { randomToken, sha256 } from '../../../lib/crypto';
import { escapeHtml } from '../../../mail/template';

/** What the send ledger keeps of an invitation or reset mail: the person and why, never a token. */
export interface TeamLinkRef {
  teamUserId: number;
  purpose: TeamTokenPurpose;
  /** The account's name, said in the invitation. */
  accountName: string;
}

const PATHS: Record<TeamTokenPurpose, string> = { invite: '/invitation', reset: '/reset-password' };

/** The link of an invitation (`/invitation/<token>`) or a password reset (`/reset-password/<token>`). */
export function teamLink(baseUrl: string, purpose: TeamTokenPurpose, token: string): string {
  return `${baseUrl}${PATHS[purpose]}/${encodeURIComponent(token)}`;
}

/** The ledger's form of the mail: no body, since the body carries the link, made when it goes out. */
export function queuedTeamLink(from: string, to: string, ref: TeamLinkRef) {
  return { from, to, subject: ref.purpose === 'invite' ? `You are invited to ${ref.accountName}` : 'Reset your password', html: '', teamLink: ref };
}

/**
 * The body of an invitation or reset mail at the moment it is sent: a fresh single-use token
 * whose SHA-256 alone is stored, replacing the person's earlier unused link of the same kind.
 * Undefined when the mail is void: the person is gone, or no longer invited (an invitation)
 * or no longer active (a reset).
 */
export async function teamLinkBody(db: Knex, baseUrl: string, ref: TeamLinkRef): Promise<{ html: string; text: string } | undefined> {
  const person = await db('team_users').where({ id: ref.teamUserId }).first('status', 'name');
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
      ? `Hello ${person.name},\n\nYou are invited to work in ${ref.accountName}. Open this link within 7 days to choose your password and sign in:\n\n${link}\n\nIf you did not expect this, ignore this mail.`
      : `Hello ${person.name},\n\nOpen this link within an hour to choose a new password:\n\n${link}\n\nIf you did not ask for this, ignore this mail: your password stays as it is.`;
  const html = `<html><body>${text
    .split(/\n{2,}/)
    .map((p) => (p === link ? `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>` : `<p>${escapeHtml(p)}</p>`))
    .join('')}</body></html>`;
  return { html, text };
}
