import type { Knex } from 'knex';
import { nowValue } from '../../../db/dialect';
import { randomToken, sha256 } from '../../../lib/crypto';
import { lazy } from '../../../lib/lazy';
import { createViews } from '../../../lib/views';

/** What the send ledger keeps of a signup confirmation mail besides its address: never a token. */
export interface SignupConfirmationRef {
  /** The `signups` row the link confirms. */
  id: number;
  form_name: string;
}

const mailViews = lazy(() => createViews());

/** The link of a confirmation mail: `$BASE_URL/subscribe/confirm/<token>`. */
export function signupConfirmationLink(baseUrl: string, token: string): string {
  return `${baseUrl}/subscribe/confirm/${encodeURIComponent(token)}`;
}

/** A confirmation mail as the send ledger stores it: no body, since the body carries the link. */
export function queuedSignupConfirmation(mailFrom: string | { name: string; address: string }, to: string, ref: SignupConfirmationRef) {
  return { from: mailFrom, to, subject: `Confirm your subscription: ${ref.form_name}`, html: '', confirmSignup: ref };
}

/**
 * The body of the confirmation mail with ledger id `messageId`, at the moment it is sent: a
 * fresh token whose sha256 becomes the signup's, so the token exists only in the mail (a retry
 * makes a new one and voids the last). Undefined when the mail is void: the signup was
 * confirmed, expired, replaced by a newer mail or erased meanwhile (nothing is sent then).
 */
export async function signupConfirmationBody(
  db: Knex,
  baseUrl: string,
  messageId: number,
  ref: SignupConfirmationRef,
): Promise<{ html: string; text: string } | undefined> {
  const token = randomToken(32);
  const changed = await db('signups')
    .where({ id: ref.id, message_id: messageId })
    .whereNull('confirmed_at')
    .where('expires_at', '>', nowValue())
    .update({ token_hash: sha256(token) });
  if (!changed) return undefined;
  const context = { formName: ref.form_name, link: signupConfirmationLink(baseUrl, token) };
  return {
    html: mailViews().render('mail/confirm-signup.html.njk', context),
    text: mailViews().render('mail/confirm-signup.txt.njk', context),
  };
}
