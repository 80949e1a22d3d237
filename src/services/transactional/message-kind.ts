import type { Knex } from 'knex';
import { jsonValue, parseJson } from '../../db/dialect';
import { createSigner, TOKEN_PURPOSE } from '../../lib/signed-token';
import { LiquidTemplate, parseLiquid, renderBudget, renderLiquid, TemplateRenderError } from '../../mail/liquid';
import { createListHeaders } from '../../mail/list-headers';
import type { OutgoingMessage } from '../../mail/outgoing-message';
import { personalValues } from '../../mail/personal-values';
import { compileMessage, CompiledMessage, renderMessage, RenderInput, TrackingOptions } from '../../mail/render';
import { fromAddress } from '../../mail/dkim';
import type { Claimed, MessageKind } from '../delivery/sending';
import { signingKeyOf } from '../delivery/relays';
import { RecentSources } from './accept';
import type { AttachmentInput } from './message-input';

/** A message's content compiled once: its subject and HTML as the sending engine's, its own text (if given) as Liquid. */
export interface CompiledContent {
  compiled: CompiledMessage;
  text: string | null;
  textTemplate?: LiquidTemplate;
}

export function compileContent(content: { subject: string; html: string; text: string | null }, tracking: TrackingOptions): CompiledContent {
  const compiled = compileMessage({ subject: content.subject, preheader: '', html: content.html }, tracking);
  const textTemplate = content.text ? parseLiquid(content.text, false) : undefined;
  return { compiled, text: content.text, ...(textTemplate ? { textTemplate } : {}) };
}

/**
 * One message's subject, HTML and text: the compiled HTML rendered with the sending engine's
 * renderer (Liquid with `liquidValues`), the text given rendered as Liquid too, or made from the
 * HTML. Out of time once may be a pause to collect garbage or a busy machine (as campaign mail):
 * once more, afresh.
 */
export function renderContent(content: CompiledContent, input: RenderInput): { subject: string; html: string; text: string } {
  const { compiled, text, textTemplate } = content;
  const render = () => {
    const budget = renderBudget();
    const rendered = renderMessage(compiled, input, budget);
    if (text === null) return rendered;
    const variables = { ...Object.fromEntries(Object.entries(input.values).filter(([, v]) => v)), ...input.liquidValues };
    return { ...rendered, text: textTemplate ? renderLiquid(textTemplate, variables, { count: 0 }, budget, 'body') : text };
  };
  try {
    return render();
  } catch (err) {
    if (!(err instanceof TemplateRenderError && err.timedOut)) throw err;
    return render();
  }
}

/** A template's content rendered for sample `data` (the dashboard's preview): never tracked. */
export function previewContent(content: { subject: string; html: string; text: string | null }, data: Record<string, unknown>): { subject: string; html: string; text: string } {
  const compiled = compileContent(content, { trackOpens: false, trackClicks: false });
  return renderContent(compiled, { values: {}, unsubscribeUrl: '', pixelUrl: '', clickUrl: '', liquidValues: { data } });
}

export interface TransactionalKindDeps {
  db: Knex;
  secret: string;
  baseUrl: string;
  /** Given: messages are signed with the verified sending domain's key of their From address. */
  signingSecret?: string;
}

/**
 * How the worker builds a transactional message from its ledger row: what the request stored,
 * its Liquid rendered with `data` and, for a recipient who is a contact, the contact's fields.
 * It leaves the way campaign mail does (the account's relays, failover, DKIM), without
 * List-Unsubscribe unless the request gave one.
 */
export function transactionalKind(deps: TransactionalKindDeps): Pick<MessageKind, 'build'> {
  const { db, baseUrl } = deps;
  const signer = createSigner(deps.secret);
  const host = new URL(baseUrl).hostname || 'localhost';
  const listHeaders = createListHeaders(baseUrl);
  const ownUrlPrefixes = [`${baseUrl}/c/`, `${baseUrl}/open/`];
  // A few dozen contents of up to 256 KiB (subject, HTML and text together).
  const compiledContents = new RecentSources<CompiledContent>(64, 256 * 1024);

  return {
    async build({ row, person }: Claimed): Promise<OutgoingMessage | undefined> {
      const id = Number(row.id);
      const stored = await db('transactional_messages').where({ id }).first();
      if (!stored) return undefined;
      const token = signer.sign(TOKEN_PURPOSE.message, id);
      const from = { name: String(stored.from_name ?? ''), address: String(stored.from_email) };
      const values = personalValues(person, parseJson<Record<string, unknown>>(person.custom_fields, {}), () => undefined, {
        sender_name: from.name,
        sender_address: '',
      });
      const liquidValues = { data: parseJson<Record<string, unknown>>(stored.data, {}) };
      const content = { subject: String(stored.subject ?? ''), html: String(stored.html ?? ''), text: stored.text ? String(stored.text) : null };
      const trackOpens = Number(stored.track_opens) === 1 && !!stored.html;
      const trackClicks = Number(stored.track_clicks) === 1 && !!stored.html;
      // Messages of one template (or an app's same body) share its compiled form: what each one
      // adds is its own values, as a campaign's messages share their send's.
      const key = JSON.stringify([content.subject, content.html, content.text, trackOpens, trackClicks]);
      let compiled = compiledContents.get(key);
      if (!compiled) {
        compiled = compileContent(content, { trackOpens, trackClicks, ownUrlPrefixes });
        compiledContents.set(key, compiled);
      }
      const { links } = compiled.compiled;
      if (links.length && stored.links === null) await db('transactional_messages').where({ id }).update({ links: jsonValue(links) });
      const rendered = renderContent(compiled, { values, unsubscribeUrl: '', pixelUrl: `${baseUrl}/open/${token}.gif`, clickUrl: `${baseUrl}/c/${token}`, liquidValues });
      const text = rendered.text;
      const attachments = parseJson<AttachmentInput[]>(stored.attachments, []);
      const cc = parseJson<string[]>(stored.cc, []);
      const bcc = parseJson<string[]>(stored.bcc, []);
      const message: OutgoingMessage = {
        from,
        to: row.email,
        ...(stored.reply_to ? { replyTo: String(stored.reply_to) } : {}),
        subject: rendered.subject,
        html: stored.html ? rendered.html : '',
        text,
        ...(cc.length ? { cc } : {}),
        ...(bcc.length ? { bcc } : {}),
        ...(attachments.length ? { attachments: attachments.map((a) => ({ filename: a.filename, content: a.content, encoding: 'base64', ...(a.content_type ? { contentType: a.content_type } : {}) })) } : {}),
        messageId: `<${signer.sign(TOKEN_PURPOSE.messageId, id)}@${host}>`,
        accountId: Number(row.user_id),
        headers: { ...parseJson<Record<string, string>>(stored.headers, {}), ...listHeaders({ userId: Number(row.user_id), kind: 'transactional' }) },
      };
      if (!deps.signingSecret) return message;
      return { ...message, ...(await signingKeyOf(db, deps.signingSecret, Number(row.user_id), fromAddress(message.from))) };
    },
  };
}
