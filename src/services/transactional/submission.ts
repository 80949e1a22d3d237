import type { Knex } from 'knex';
import { countApiHit, uncountApiHit } from '../../db/rate-limits';
import type { TeamRole } from '../../lib/constants';
import { lazy } from '../../lib/lazy';
import type { AccountsService } from '../accounts/accounts';
import type { Ctx } from '../context';
import type { AcceptedMessage } from './accept';
import type { TransactionalService } from './transactional';

const mailparser = lazy(() => require('mailparser') as typeof import('mailparser'));

/** Failed sign-ins from one address within a minute before it is refused for the rest of that minute. */
export const SUBMISSION_AUTH_FAILURES = 10;
const FAILURE_WINDOW_MS = 60_000;

/** Headers that instruct the service and are never sent on. */
const INSTRUCTIONS = ['idempotency-key', 'x-tags'];
/** Headers nodemailer writes itself when the message is built again. */
const REBUILT = new Set(['from', 'to', 'cc', 'bcc', 'reply-to', 'subject', 'date', 'message-id', 'mime-version', 'content-type', 'content-transfer-encoding', 'dkim-signature', 'received', 'return-path']);

export interface SubmissionDeps {
  db: Knex;
  accounts: Pick<AccountsService, 'authenticate'>;
  transactional: TransactionalService;
  /** The roles that may send transactional mail (the permission table's). */
  senders: readonly TeamRole[];
}

export type SignIn = { ctx: Ctx } | { refused: 'credentials' | 'role' | 'too_many' };

/**
 * SMTP submission as transactional mail: who signs in (a key pair: the PublicKey as user name,
 * the SecretKey or a role key's secret as password), whether a From is theirs, and a submitted
 * message turned into one transactional message per recipient. The SMTP server itself is the
 * worker's (src/workers/submission-server.ts).
 */
export function createSubmission(deps: SubmissionDeps) {
  const { db } = deps;

  return {
    /**
     * Checks a sign-in. Every attempt from `remote` counts in a window shared by all processes
     * (a success is uncounted), so more than SUBMISSION_AUTH_FAILURES failures a minute from one
     * address are refused until the minute is over, whatever the credentials.
     */
    async signIn(user: string, password: string, remote: string): Promise<SignIn> {
      const key = `smtp-auth:${remote}`;
      const { hits } = await countApiHit(db, key, FAILURE_WINDOW_MS);
      if (hits > SUBMISSION_AUTH_FAILURES) return { refused: 'too_many' };
      const holder = user && password ? await deps.accounts.authenticate(user.trim(), password.trim()) : undefined;
      if (!holder) return { refused: 'credentials' };
      await uncountApiHit(db, key);
      if (!deps.senders.includes(holder.actor.role)) return { refused: 'role' };
      return { ctx: { userId: holder.id, actor: holder.actor, ip: remote } };
    },

    /**
     * Turns one submitted message into transactional messages, one per envelope recipient: its
     * From must be a verified sender of the account (the send refuses it otherwise); its
     * `Idempotency-Key` and `X-Tags` headers are read and not sent on.
     */
    async submit(ctx: Ctx, raw: Buffer, recipients: string[]): Promise<AcceptedMessage[]> {
      const parsed = await mailparser().simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
      const header = (name: string) => {
        const value = parsed.headers.get(name);
        return typeof value === 'string' ? value.trim() : undefined;
      };
      const headers: Record<string, string> = {};
      for (const line of parsed.headerLines) {
        const name = line.line.slice(0, line.line.indexOf(':')).trim();
        if (INSTRUCTIONS.includes(name.toLowerCase()) || REBUILT.has(name.toLowerCase()) || !/^X-/i.test(name)) continue;
        headers[name] = line.line.slice(line.line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
      }
      const tags = (header('x-tags') ?? '').split(',').map((t) => t.trim()).filter(Boolean);
      const body = {
        to: recipients,
        from: parsed.from?.value[0]?.address ?? '',
        subject: parsed.subject ?? '',
        ...(parsed.html ? { html: parsed.html } : {}),
        ...(parsed.text ? { text: parsed.text } : {}),
        ...(parsed.replyTo?.value[0]?.address ? { reply_to: parsed.replyTo.value[0].address } : {}),
        ...(Object.keys(headers).length ? { headers } : {}),
        ...(tags.length ? { tags } : {}),
        ...(parsed.attachments.length
          ? { attachments: parsed.attachments.map((a) => ({ filename: a.filename ?? 'attachment', content: a.content.toString('base64'), content_type: a.contentType })) }
          : {}),
      };
      return deps.transactional.send(ctx, body, header('idempotency-key'), 'smtp');
    },
  };
}

export type Submission = ReturnType<typeof createSubmission>;
