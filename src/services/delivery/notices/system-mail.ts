import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { jsonValue, nowValue, parseJson } from '../../../db/dialect';
import { emailKey } from '../../../lib/email-key';
import { MESSAGE_KIND, MESSAGE_PRIORITY, MESSAGE_STATE } from '../../../lib/constants';
import { randomToken } from '../../../lib/crypto';
import { createSigner, TOKEN_PURPOSE } from '../../../lib/signed-token';
import { transitionMessages } from '../../shared/message-state';
import { failedOutcome, recordOutcomes } from '../ledger';
import { feedbackStamp } from '../../../mail/feedback-stamp';
import { createListHeaders } from '../../../mail/list-headers';
import { signingKeyOf } from '../relays';
import { fromAddress } from '../../../mail/dkim';
import { verificationBody, VerificationRef } from './sender-verification';
import { signupConfirmationBody, SignupConfirmationRef } from './signup-confirmation';
import { teamLinkBody, TeamLinkRef } from './team-links';
import type { OutgoingMessage } from '../../../mail/outgoing-message';
import { classifySendError, MailTransport } from '../../../mail/transport';

const MAX_ATTEMPTS = 5;

export type SystemMail = Pick<OutgoingMessage, 'from' | 'to' | 'subject' | 'html' | 'text' | 'replyTo'> & {
  /** A sender verification mail: its body (with the link's token) is made when it is sent. */
  verifySender?: VerificationRef;
  /** A signup's confirmation mail: likewise, its link's token is made when it is sent. */
  confirmSignup?: SignupConfirmationRef;
  /** An invitation or password-reset mail: likewise, its link's token is made when it is sent. */
  teamLink?: TeamLinkRef;
};

/** Why a system message was not sent (systemMessage answered undefined). */
export const VOID_SYSTEM_MAIL =
  'a newer mail replaced its link, or what it asks for is done or gone (the sender verified or deleted, the signup confirmed, expired or erased, the invited person removed or joined)';

/**
 * Writes a system message to the send ledger (in the caller's transaction when given): the
 * worker sends it with the same retries and crash safety as campaigns. Returns its ledger id.
 */
export async function queueSystemMail(db: Knex, userId: number, message: SystemMail): Promise<number> {
  const now = nowValue();
  const { to, ...payload } = message;
  const [row] = await db('send_messages')
    .insert({
      user_id: userId,
      kind: MESSAGE_KIND.system,
      email: to,
      email_key: emailKey(to),
      priority: MESSAGE_PRIORITY.system,
      state: MESSAGE_STATE.queued,
      available_at: now,
      payload: jsonValue(payload),
      created_at: now,
      updated_at: now,
    })
    .returning('id');
  return Number(typeof row === 'object' ? row.id : row);
}

/**
 * The message of a system ledger row, as the worker (or deliverNow) sends it; undefined when
 * it is void (VOID_SYSTEM_MAIL) and must not be sent.
 */
export async function systemMessage(
  db: Knex,
  baseUrl: string,
  row: { id: number; user_id: number; email: string; payload: unknown },
  messageId: string,
): Promise<OutgoingMessage | undefined> {
  const { verifySender, confirmSignup, teamLink, ...payload } = parseJson<Omit<SystemMail, 'to'>>(row.payload, { from: '', subject: '', html: '' });
  const message = { ...payload, to: row.email, messageId, accountId: Number(row.user_id), headers: createListHeaders(baseUrl)({ userId: Number(row.user_id), kind: 'system' }) };
  if (confirmSignup) {
    const body = await signupConfirmationBody(db, baseUrl, Number(row.id), confirmSignup);
    return body && { ...message, ...body };
  }
  if (teamLink) {
    const body = await teamLinkBody(db, baseUrl, teamLink);
    return body && { ...message, ...body };
  }
  if (!verifySender) return message;
  const body = await verificationBody(db, { baseUrl }, Number(row.id), verifySender, row.email);
  return body && { ...message, ...body };
}

export function messageIdOf(secret: string, id: number, baseUrl: string): string {
  return `<${createSigner(secret).sign(TOKEN_PURPOSE.messageId, id)}@${new URL(baseUrl).hostname || 'localhost'}>`;
}

export interface DeliverNowDeps {
  db: Knex;
  mail: MailTransport;
  logger: Logger;
  secret: string;
  baseUrl: string;
  bounceDomain: string | undefined;
  smtpUrl: string | undefined;
}

/** unconfirmed: the server went silent after taking the message; it may have arrived and is not sent again. */
export type DeliveredNow = 'sent' | 'retry' | 'bounce' | 'unconfirmed' | 'taken' | 'void';

/**
 * Sends a queued system message at once, for callers that answer only after the mail went
 * out (sender verification). It claims the row like a worker would and records the outcome
 * in the ledger: a 4xx or a connection failure stays queued and the worker retries it.
 * Answers `taken` when a worker claimed the row first.
 */
export async function deliverNow(deps: DeliverNowDeps, id: number): Promise<DeliveredNow> {
  const owner = `now-${randomToken(6)}`;
  const now = new Date();
  const [row] = await transitionMessages(deps.db('send_messages').where({ id }), 'sendNow', {
    attempts: deps.db.raw('attempts + 1'),
    // Handed to the server right away: a crash before the outcome is written leaves this trace.
    unconfirmed: deps.db.raw('unconfirmed + 1'),
    lease_owner: owner,
    available_at: new Date(now.getTime() + 60_000).toISOString(),
    updated_at: now.toISOString(),
  }).returning(['id', 'user_id', 'email', 'email_key', 'attempts', 'payload']);
  if (!row) return 'taken';
  const policy = { owner, now, maxAttempts: MAX_ATTEMPTS, retryDelayMs: () => 60_000 };
  try {
    const message = await systemMessage(deps.db, deps.baseUrl, row, messageIdOf(deps.secret, Number(row.id), deps.baseUrl));
    if (!message) {
      await recordOutcomes(deps.db, [{ id: Number(row.id), result: 'suppressed', error: VOID_SYSTEM_MAIL }], policy);
      return 'void';
    }
    const signing = await signingKeyOf(deps.db, deps.secret, Number(row.user_id), fromAddress(message.from));
    await deps.mail.send(feedbackStamp(deps.secret, deps.bounceDomain, deps.smtpUrl)({ ...message, ...signing }, Number(row.id)));
    await recordOutcomes(deps.db, [{ id: Number(row.id), result: 'sent' }], policy);
    return 'sent';
  } catch (err) {
    const failure = classifySendError(err);
    deps.logger.warn({ err: failure.message, code: failure.code, messageId: row.id }, 'system mail not delivered now');
    await recordOutcomes(deps.db, [failedOutcome(row, failure)], policy);
    return failure.outcome;
  }
}
