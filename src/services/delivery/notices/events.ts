import type { Knex } from 'knex';
import { queueSystemMail } from './system-mail';
import { escapeHtml } from '../../../mail/template';
import type { ServiceDeps } from '../../context';
import type { RateAlert } from './rate-alerts';
import type { PolicyPause } from '../ledger';

const percent = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}%`;

/** A notice of a pause: what happened, then what to fix and how to go on once it is fixed. */
const pauseNotice = (...paragraphs: string[]) => paragraphs.join('\n\n');
const whatToFix = (fix: string) => `What to fix: ${fix}`;

/**
 * The fix for a pause under REQUIRE_DOMAIN_AUTH: verify `domain` again, then `goOn`, or move to
 * another sender (`otherSender` says where).
 */
const verifyDomain = (domain: string, goOn: string, otherSender: string) =>
  whatToFix(`open Domains on the dashboard and check ${domain}; if it is failing, publish the records it shows again (the DKIM and DMARC records) and press "Check now". Once the domain is verified, ${goOn}. Or ${otherSender} a sender whose domain is verified.`);

export interface SystemMessage {
  subject: string;
  /** Plain text; the HTML part is made from it. */
  text: string;
}

/**
 * The account's events (docs/sending-and-tracking.md, "Event notifications"): each emails every notification recipient of the account.
 * Mail is written to the send ledger (in the caller's transaction when given), so the worker
 * sends it with the same retries and crash safety as campaigns, ahead of them.
 * (`systemMail` is the way in for a single message, such as sender verification.)
 */
export function createEventsService({ db, config }: Pick<ServiceDeps, 'db' | 'config'>) {
  /** Queues one system message to one address. */
  async function queue(trx: Knex, userId: number, to: string, message: SystemMessage): Promise<void> {
    const paragraphs = message.text.split(/\n{2,}/).map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`);
    await queueSystemMail(trx, userId, { from: config.mailFrom, to, subject: message.subject, text: message.text, html: `<html><body>${paragraphs.join('')}</body></html>` });
  }

  async function notify(userId: number, message: SystemMessage, trx: Knex = db): Promise<number> {
    const recipients = await trx('notification_recipients').where({ user_id: userId }).orderBy('id').select('email_address');
    for (const r of recipients) await queue(trx, userId, String(r.email_address), message);
    return recipients.length;
  }

  const at = () => new Date().toISOString().slice(0, 19).replace('T', ' ');

  return {
    /** Mail to one address through the ledger. */
    systemMail: (userId: number, to: string, message: SystemMessage, trx: Knex = db) => queue(trx, userId, to, message),
    notify,

    singleSendStarted: (userId: number, send: { name: string; recipients: number }, trx: Knex = db) =>
      notify(
        userId,
        {
          subject: `Single send started: ${send.name}`,
          text: `Your single send "${send.name}" started sending at ${at()} UTC to ${send.recipients} recipients.`,
        },
        trx,
      ),

    async singleSendCompleted(sendId: number, trx: Knex = db): Promise<number> {
      const send = await trx('single_sends').where({ id: sendId }).first('user_id', 'single_send_name', 'triggered', 'delivered', 'bounces');
      if (!send) return 0;
      return notify(
        Number(send.user_id),
        {
          subject: `Single send completed: ${send.single_send_name}`,
          text: `Your single send "${send.single_send_name}" completed at ${at()} UTC.\n\nRecipients: ${send.triggered}\nDelivered: ${send.delivered}\nBounces: ${send.bounces}`,
        },
        trx,
      );
    },

    automationLive: (userId: number, name: string, trx: Knex = db) =>
      notify(userId, { subject: `Automation live: ${name}`, text: `Your automation "${name}" went live at ${at()} UTC.` }, trx),

    automationPaused: (userId: number, name: string, trx: Knex = db) =>
      notify(
        userId,
        { subject: `Automation paused: ${name}`, text: `Your automation "${name}" was paused at ${at()} UTC. It sends nothing until it is set live again.` },
        trx,
      ),

    csvImportFinished: (userId: number, summary: { file?: string; rows: number; created: number; updated: number; skipped: number }) =>
      notify(userId, {
        subject: 'Contact import finished',
        text: `Your contact import${summary.file ? ` of ${summary.file}` : ''} finished at ${at()} UTC.\n\nRows: ${summary.rows}\nCreated: ${summary.created}\nUpdated: ${summary.updated}\nSkipped: ${summary.skipped}`,
      }),

    /** A send's bounce rate passed 5% or its complaint rate 0.1% (once per send and kind). */
    sendRateAlert: (a: RateAlert, trx: Knex = db) =>
      notify(
        a.userId,
        a.kind === 'bounce'
          ? {
              subject: `High bounce rate: ${a.sendName}`,
              text: `Your single send "${a.sendName}" has bounced for ${a.count} of ${a.sent} recipients (${percent(a.count, a.sent)}).\n\nMailbox providers start filtering or blocking senders whose bounce rate passes 5%. The addresses that bounced are suppressed and will not be mailed again; check where this list came from before you send to it again.`,
            }
          : {
              subject: `Spam complaints: ${a.sendName}`,
              text: `${a.count} of the ${a.sent} recipients of your single send "${a.sendName}" marked it as spam (${percent(a.count, a.sent)}).\n\nMailbox providers act when complaints pass 0.1%. These addresses are now unsubscribed from all your mail. Make sure people asked for this mail and can leave easily.`,
            },
        trx,
      ),

    /** The guard paused a sending domain's mail to one mailbox provider (once per pause). */
    providerPaused: (p: { userId: number; domain: string; provider: string; providerName: string; reason: string }, trx: Knex = db) =>
      notify(p.userId, { subject: `Mail from ${p.domain} to ${p.providerName} is paused`, text: p.reason }, trx),

    /** A send was paused because receivers refused it for the sender's authentication or reputation (once per send). */
    sendPausedForPolicy: (p: PolicyPause, trx: Knex = db) =>
      notify(
        p.userId,
        {
          subject: `Single send paused: ${p.sendName} is refused as unauthenticated`,
          text: pauseNotice(
            `Your single send "${p.sendName}" was paused at ${at()} UTC: receiving mail servers refused ${p.refused} of the ${p.attempted} messages attempted so far because of how the mail is authenticated or the sender's reputation, not because of the addresses. No address was suppressed.`,
            `One of the refusals: ${p.example}`,
            whatToFix(`make sure the From address's domain is a verified sending domain of your account (DKIM record published and matching), that its SPF record includes the relay you send through, and that it has a DMARC record. Gmail and Outlook refuse bulk mail that is not DMARC-aligned. When the domain checks out, resume the send: it continues with the messages not yet sent; the refused ones can be retried with "retry failed".`),
          ),
        },
        trx,
      ),

    /** A send was paused because the subject or body of its messages did not render (once per send). */
    sendPausedForTemplateErrors: (p: PolicyPause, trx: Knex = db) =>
      notify(
        p.userId,
        {
          subject: `Single send paused: ${p.sendName} has a template that does not render`,
          text: pauseNotice(
            `Your single send "${p.sendName}" was paused at ${at()} UTC: ${p.refused} of the ${p.attempted} messages attempted so far could not be rendered, so they were not sent. Nobody received a blank or broken message.`,
            `The error: ${p.example.replace(/^template_error: /, '')}`,
            whatToFix(`simplify the Liquid of the subject or body the error names (a loop over a large range, or text built up in a loop, runs past the limits every message has). If the send uses a design template, fix that template; a send that has started keeps its own content otherwise, so duplicate it to send a fixed copy. Then resume the send, and retry the failed messages with "retry failed".`),
          ),
        },
        trx,
      ),

    /** A due send was paused at its start: REQUIRE_DOMAIN_AUTH and its From domain is no longer (or not yet) verified. */
    sendPausedUnauthenticated: (send: { userId: number; name: string; fromEmail: string }, trx: Knex = db) =>
      notify(
        send.userId,
        {
          subject: `Single send paused: ${send.name} is from an unauthenticated domain`,
          text: pauseNotice(
            `Your single send "${send.name}" was due at ${at()} UTC and was paused before sending anything: its From address ${send.fromEmail} is not in a verified sending domain of your account, and this service sends only from verified domains.`,
            verifyDomain(`the domain of ${send.fromEmail}`, 'resume the send: it starts at once', 'edit the send to use'),
          ),
        },
        trx,
      ),

    /** A live automation was paused by the worker: REQUIRE_DOMAIN_AUTH and a step's From domain is not verified. */
    automationPausedUnauthenticated: (automation: { userId: number; name: string; fromEmails: string[] }, trx: Knex = db) =>
      notify(
        automation.userId,
        {
          subject: `Automation paused: ${automation.name} sends from an unauthenticated domain`,
          text: pauseNotice(
            `Your automation "${automation.name}" was paused at ${at()} UTC: ${automation.fromEmails.length === 1 ? 'the From address' : 'the From addresses'} ${automation.fromEmails.join(', ')} of its emails ${automation.fromEmails.length === 1 ? 'is' : 'are'} not in a verified sending domain of your account, and this service sends only from verified domains. Its emails due now wait; none was dropped.`,
            verifyDomain('the domain', 'set the automation live again: the waiting emails go out then', 'change its emails to'),
          ),
        },
        trx,
      ),

    senderVerified: (userId: number, sender: { from_name: string; from_email: string }) =>
      notify(userId, {
        subject: `Sender verified: ${sender.from_email}`,
        text: `The sender ${sender.from_name} <${sender.from_email}> was verified at ${at()} UTC and can now be used.`,
      }),
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
