import type { Knex } from 'knex';
import type { Config } from '../../../config';
import { randomToken, sha256 } from '../../../lib/crypto';
import { lazy } from '../../../lib/lazy';
import { createViews } from '../../../lib/views';

export interface VerificationRecipient {
  from_name: string;
  from_email: string;
}

/** What the send ledger keeps of a verification mail besides its address: the sender, never a token. */
export interface VerificationRef {
  id: number;
  from_name: string;
}

const SUBJECT = 'Confirm your sender address';

/** The templates of the verification mail (views/mail/verify-sender.*.njk); read once, autoescaped. */
/** nunjucks loads with the first verification mail, not at every start of every process. */
const mailViews = lazy(() => createViews());

/** The link a sender's verification mail carries: `$BASE_URL/verify-sender/<token>`. */
export function verificationLink(config: Pick<Config, 'baseUrl'>, token: string): string {
  return `${config.baseUrl}/verify-sender/${encodeURIComponent(token)}`;
}

/**
 * A sender's verification mail as the send ledger stores it: no body, since the body carries
 * the link, whose token is made only when the mail goes out (verificationBody).
 */
export function queuedVerification(config: Pick<Config, 'mailFrom'>, sender: VerificationRecipient & { id: number }) {
  return {
    from: config.mailFrom,
    to: sender.from_email,
    subject: SUBJECT,
    html: '',
    verifySender: { id: sender.id, from_name: sender.from_name } satisfies VerificationRef,
  };
}

/**
 * The body of the verification mail with ledger id `messageId` to `to`, at the moment it is
 * sent: a fresh single-use token whose sha256 becomes the sender's, so the token exists only
 * in the mail. Undefined when the mail is void: a newer verification mail replaced it, or the
 * sender was verified or deleted meanwhile (nothing is sent then).
 */
export async function verificationBody(
  db: Knex,
  config: Pick<Config, 'baseUrl'>,
  messageId: number,
  sender: VerificationRef,
  to: string,
): Promise<{ html: string; text: string } | undefined> {
  const token = randomToken(32);
  const changed = await db('senders')
    .where({ id: sender.id, verify_message_id: messageId, is_verified: 0 })
    .whereNull('deleted_at')
    .update({ verify_token_hash: sha256(token) });
  if (!changed) return undefined;
  const context = { sender: { from_name: sender.from_name, from_email: to }, link: verificationLink(config, token) };
  return {
    html: mailViews().render('mail/verify-sender.html.njk', context),
    text: mailViews().render('mail/verify-sender.txt.njk', context),
  };
}
