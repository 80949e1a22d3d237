import type { Knex } from 'knex';
import { LIQUID_LIMITS, MESSAGE_KIND, SAMPLE_CONTACT } from '../../../lib/constants';
import { ValidationError } from '../../../lib/errors';
import type { Turns } from '../../../lib/turns';
import { MessagePart, renderBudget, TemplateRenderError } from '../../../mail/liquid';
import { emailKey } from '../../../lib/email-key';
import { createSigner } from '../../../lib/signed-token';
import type { RenderedMessage } from '../../../mail/render';
import { escapeHtml } from '../../../mail/template';
import type { LedgerRow } from '../ledger';
import { MessageSources, sourceKey } from './message-sources';

export interface PreviewTarget {
  userId: number;
  /** The single send, or the automation step (schedule), whose message it is. */
  singleSendId?: number;
  scheduleId?: number;
  /** A contact of the account (checked by the caller), or none: placeholders render empty. */
  contact?: { id: number; email: string };
  /** Without a contact: the made-up person whose values fill the placeholders (samplePerson). */
  sample?: Record<string, unknown>;
  /** A single send's A/B test variant to show (see shownVariants); none: the send's own content. */
  abVariant?: number;
}

/** SAMPLE_CONTACT as a person of the renderer, each custom field showing its name in brackets. */
export function samplePerson(customFieldNames: readonly string[]): Record<string, unknown> {
  return { ...SAMPLE_CONTACT, custom_fields: JSON.stringify(Object.fromEntries(customFieldNames.map((name) => [name, `[${name}]`]))) };
}

/**
 * A single send's (or automation step's) message exactly as the worker would build it for one
 * contact: the same sources, personal values and renderer. It is built for a message that does
 * not exist (id 0), so its unsubscribe links answer 404 and record nothing; the open pixel is
 * left out. `untracked` (a test send, a preview): no pixel, and links as written instead of click links.
 */
export async function previewMessage(db: Knex, secret: string, baseUrl: string, target: PreviewTarget, options: { untracked?: boolean; turns: Turns }): Promise<RenderedMessage | undefined> {
  const email = target.contact?.email ?? String(target.sample?.email ?? '');
  const row: LedgerRow = {
    id: 0,
    kind: target.scheduleId ? MESSAGE_KIND.automation : MESSAGE_KIND.single,
    user_id: target.userId,
    single_send_id: target.singleSendId ?? null,
    automation_id: null,
    automation_schedule_id: target.scheduleId ?? null,
    contact_id: target.contact?.id ?? null,
    segment_recipient_id: null,
    email,
    email_key: emailKey(email),
    attempts: 0,
    unconfirmed: 0,
    payload: null,
    ab_variant: target.abVariant ?? null,
  };
  const signer = createSigner(secret);
  const sources = new MessageSources(db, signer, baseUrl, { recordLinks: false, untracked: options.untracked });
  // Compiling and rendering are a turn each (see Turns).
  const { sources: loaded, people } = await options.turns.run(() => sources.prepare([row]));
  const source = loaded.get(sourceKey(row)!);
  if (!source) return undefined;
  const person = !target.contact && target.sample ? target.sample : people(row);
  const message = await options.turns.run(async () => sayingTemplateErrors(() => sources.build(row, source, person, false, renderBudget(LIQUID_LIMITS.requestRenderMs))));
  return { subject: message.subject, html: blankOpenPixels(message.html ?? '', baseUrl), text: message.text ?? '' };
}

/**
 * A design not saved yet, rendered for one contact of the account (or for nobody) exactly as
 * the worker renders a send: the editor's live preview. Untracked: no pixel, links as written.
 */
export async function previewDraft(
  db: Knex,
  secret: string,
  baseUrl: string,
  target: { userId: number; contact?: { id: number; email: string }; sample?: Record<string, unknown> },
  draft: { subject: string; preheader: string; html: string; senderId?: number },
  turns: Turns,
): Promise<RenderedMessage> {
  return turns.run(() => buildDraftPreview(db, secret, baseUrl, target, draft));
}

async function buildDraftPreview(
  db: Knex,
  secret: string,
  baseUrl: string,
  target: { userId: number; contact?: { id: number; email: string }; sample?: Record<string, unknown> },
  draft: { subject: string; preheader: string; html: string; senderId?: number },
): Promise<RenderedMessage> {
  const email = target.contact?.email ?? String(target.sample?.email ?? '');
  const row: LedgerRow = {
    id: 0, kind: MESSAGE_KIND.single, user_id: target.userId, single_send_id: null, automation_id: null, automation_schedule_id: null,
    contact_id: target.contact?.id ?? null, segment_recipient_id: null, email, email_key: emailKey(email), attempts: 0, unconfirmed: 0, payload: null,
  };
  const sources = new MessageSources(db, createSigner(secret), baseUrl, { recordLinks: false, untracked: true });
  const message = await sources.buildDraft(row, draft, target.contact ? undefined : target.sample, renderBudget(LIQUID_LIMITS.requestRenderMs)).catch((err) => {
    throw err instanceof TemplateRenderError ? templateErrorOf(err) : err;
  });
  return { subject: message.subject, html: message.html ?? '', text: message.text ?? '' };
}

/** The field a part of a message is saved as. */
const PART_FIELDS: Record<MessagePart, string> = { subject: 'subject', preheader: 'preheader', body: 'template_html' };

/** A preview or test send whose Liquid does not render is refused (422) with the reason under the field it comes from. */
function templateErrorOf(err: TemplateRenderError): ValidationError {
  return ValidationError.of(PART_FIELDS[err.part], err.message);
}

function sayingTemplateErrors<T>(build: () => T): T {
  try {
    return build();
  } catch (err) {
    throw err instanceof TemplateRenderError ? templateErrorOf(err) : err;
  }
}

/**
 * A single send's message for one contact (see previewMessage), with its links as written:
 * click links of a message that does not exist would lead nowhere from the preview.
 */
export function previewSingleSend(db: Knex, secret: string, baseUrl: string, target: PreviewTarget & { singleSendId: number }, turns: Turns): Promise<RenderedMessage | undefined> {
  return previewMessage(db, secret, baseUrl, target, { untracked: true, turns });
}

const BLANK_GIF = 'data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==';

/**
 * Looking at a message in the dashboard (a preview, the Outbox) is not an open: every open
 * pixel of this service becomes a blank image (which the frame's CSP allows).
 */
export function blankOpenPixels(html: string, baseUrl: string): string {
  const origin = escapeHtml(baseUrl).replace(/[.*+?^$()|[\]{}\\]/g, '\\$&');
  return html.replace(new RegExp(origin + '/open/[\\w.-]+\\.gif', 'g'), BLANK_GIF);
}
