import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { nowValue, parseJson } from '../../../db/dialect';
import { WEBVIEW_PLACEHOLDER } from '../../../lib/constants';
import { Signer, TOKEN_PURPOSE } from '../../../lib/signed-token';
import { compileMessage, CompiledMessage, renderEncoded, renderMessage, RenderedMessage, renumberLinks, TrackingOptions } from '../../../mail/render';
import { renderBudget, RenderBudget, TemplateRenderError } from '../../../mail/liquid';
import { personalValues, SenderValues } from '../../../mail/personal-values';
import { withoutRecipientBlocks } from '../../../mail/recipient-only';
import { systemMessage } from '../notices';
import type { OutgoingMessage } from '../../../mail/outgoing-message';
import type { LedgerRow } from '../ledger';
import { fromAddress } from '../../../mail/dkim';
import { createListHeaders } from '../../../mail/list-headers';
import { SigningDomain, signingKeyOf } from '../relays';

/** Everything a message of one send (or automation step) shares, compiled once. */
export interface MessageSource {
  compiled: CompiledMessage;
  from: { name: string; address: string };
  replyTo: string;
  sender: SenderValues;
  /** The unsubscribe group whose members must not receive it. */
  groupId: number | null;
  /** The relay the send or step names (an account's relay; null: the account's usual choice). */
  relayId?: number | null;
  /** Its verified sending domain's key and bounce subdomain, when the worker signs (see signingKeyOf). */
  signing?: SigningDomain;
  /** An automation step's: the stored version of its link numbers (link_versions) its messages are sent with. */
  linkVersion?: number;
}

/** Whose links a compiled message's links are numbered among: an automation step's, or a single send's. */
type LinkOwner = { user_id: unknown; automation_id: unknown; automation_schedule_id: unknown } | { user_id: unknown; single_send_id: unknown };

/** The web view of a sent message (`((webview_url))`): a page that shows it; looking at it records nothing. */
export function webViewUrl(baseUrl: string, signer: Signer, messageId: number): string {
  return `${baseUrl}/view/${signer.sign(TOKEN_PURPOSE.webview, messageId)}`;
}

/** A stored time as text to the millisecond (PostgreSQL answers a Date, whose String() drops them). */
function savedAt(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

/** The key of a row's source in the cache: one per single send (and A/B test variant), one per automation step. */
export function sourceKey(row: LedgerRow): string | undefined {
  if (row.single_send_id) return row.ab_variant === null || row.ab_variant === undefined ? `s${row.single_send_id}` : `s${row.single_send_id}v${row.ab_variant}`;
  if (row.automation_schedule_id) return `a${row.automation_schedule_id}`;
  return undefined;
}

const CONTACT_COLUMNS = [
  'id', 'deleted_at', 'first_name', 'last_name', 'email', 'alt_email', 'country', 'state', 'city', 'address_line1',
  'address_line2', 'state_province_region', 'postal_code', 'custom_fields',
];
const SEGMENT_RECIPIENT_COLUMNS = ['id', 'first_name', 'last_name', 'email', 'country', 'state', 'city', 'address_line1'];

/**
 * Loads what the messages of a claimed batch need, a few queries per batch: their sources
 * (cached: a send does not change once it runs), the contacts, and the geography names.
 */
export class MessageSources {
  private readonly cache = new Map<string, MessageSource>();
  /** When each cached automation step was last saved: a step can be edited while it runs. */
  private readonly versions = new Map<string, string>();
  /** Sources to read again at the next batch (see forget). */
  private readonly stale = new Set<string>();
  private countries?: Map<number, string>;
  private readonly host: string;
  private readonly listHeaders: ReturnType<typeof createListHeaders>;

  constructor(
    private readonly db: Knex,
    private readonly signer: Signer,
    private readonly baseUrl: string,
    /**
     * recordLinks: store each source's tracked links (the worker); untracked: no pixel, links as
     * written (a test send); forNobody: without the blocks only a recipient needs (the public archive).
     */
    private readonly options: { recordLinks: boolean; untracked?: boolean; forNobody?: boolean } = { recordLinks: true },
    /** The app secret that opens the sending domains' keys: given, each source carries its key (the worker). */
    private readonly signingSecret?: string,
  ) {
    this.host = new URL(baseUrl).hostname || 'localhost';
    this.listHeaders = createListHeaders(baseUrl);
  }

  async prepare(rows: LedgerRow[]): Promise<{ sources: Map<string, MessageSource>; people: (row: LedgerRow) => Record<string, unknown> }> {
    await this.loadCountries();
    for (const key of this.stale) this.cache.delete(key);
    this.stale.clear();
    await this.dropEditedSteps(rows);
    for (const row of rows) {
      const key = sourceKey(row);
      if (!key || this.cache.has(key)) continue;
      // A source that cannot be loaded fails its own messages (no source), not the whole batch.
      const source = await this.loadSource(row).then((loaded) => this.withKey(row, loaded)).catch(() => undefined);
      if (source) this.cache.set(key, source);
    }
    if (this.cache.size > 200) this.trimCache(rows);
    const contactIds = [...new Set(rows.map((r) => r.contact_id).filter((id): id is number => !!id))];
    const memberIds = [...new Set(rows.filter((r) => !r.contact_id && r.segment_recipient_id).map((r) => r.segment_recipient_id as number))];
    const contacts = new Map<number, Record<string, unknown>>();
    const members = new Map<number, Record<string, unknown>>();
    if (contactIds.length) for (const c of await this.db('contacts').whereIn('id', contactIds).select(CONTACT_COLUMNS)) contacts.set(Number(c.id), c);
    if (memberIds.length) for (const m of await this.db('segment_recipients').whereIn('id', memberIds).select(SEGMENT_RECIPIENT_COLUMNS)) members.set(Number(m.id), m);
    return {
      sources: this.cache,
      people: (row) =>
        (row.contact_id && contacts.get(Number(row.contact_id))) ||
        (row.segment_recipient_id && members.get(Number(row.segment_recipient_id))) || { email: row.email },
    };
  }

  /**
   * The message for one ledger row of a send or automation step; `encoded`: its HTML and text
   * come quoted-printable encoded, for the transport to send as built (the worker).
   */
  build(row: LedgerRow, source: MessageSource, person: Record<string, unknown>, encoded = false, budget?: RenderBudget): OutgoingMessage {
    const token = this.signer.sign(TOKEN_PURPOSE.message, Number(row.id));
    const unsubscribeUrl = `${this.baseUrl}/unsubscribe/${token}`;
    const values = personalValues(person, parseJson<Record<string, unknown>>(person.custom_fields, {}), (id) => this.countries?.get(id), source.sender);
    values[WEBVIEW_PLACEHOLDER] = webViewUrl(this.baseUrl, this.signer, Number(row.id));
    const input = { values, unsubscribeUrl, pixelUrl: `${this.baseUrl}/open/${token}.gif`, clickUrl: `${this.baseUrl}/c/${token}` };
    const render = (given?: RenderBudget) => (encoded ? renderEncoded : renderMessage)(source.compiled, input, given);
    let rendered: RenderedMessage;
    try {
      rendered = render(budget);
    } catch (err) {
      // Out of time once may be a pause to collect garbage or a busy machine: once more, afresh.
      // Twice is the template's (so the costliest template costs two budgets of CPU, no more).
      if (!(err instanceof TemplateRenderError && err.timedOut)) throw err;
      rendered = render(budget && renderBudget(budget.ms));
    }
    return {
      from: source.from,
      to: row.email,
      replyTo: source.replyTo,
      subject: rendered.subject,
      html: rendered.html,
      text: rendered.text,
      encoded,
      ...(rendered.templateErrors ? { templateErrors: rendered.templateErrors } : {}),
      messageId: `<${this.signer.sign(TOKEN_PURPOSE.messageId, Number(row.id))}@${this.host}>`,
      // Without SMTP_URL the outbox files it under the account (its dashboard Outbox page).
      accountId: Number(row.user_id),
      headers: {
        'List-Unsubscribe': `<${unsubscribeUrl}>, <mailto:${source.replyTo}?subject=${encodeURIComponent(`unsubscribe ${token}`)}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        ...this.listHeaders(row.automation_id
          ? { userId: Number(row.user_id), kind: 'automation', campaignId: Number(row.automation_id), groupId: source.groupId }
          : { userId: Number(row.user_id), kind: 'campaign', campaignId: Number(row.single_send_id) || undefined, groupId: source.groupId }),
      },
      ...source.signing,
    };
  }

  /**
   * A message not saved yet (the editor's live preview) for one row: compiled from the given
   * content with the same renderer and personal values as a send, never tracked (no pixel,
   * links as written). The sender, when given, must be the row's account's; a row without a
   * contact is rendered for `sample` when given. Its Liquid has `budget`.
   */
  async buildDraft(row: LedgerRow, draft: { subject: string; preheader: string; html: string; senderId?: number }, sample: Record<string, unknown> | undefined, budget: RenderBudget): Promise<OutgoingMessage> {
    await this.loadCountries();
    const sender = draft.senderId ? await this.db('senders').where({ id: draft.senderId, user_id: row.user_id }).whereNull('deleted_at').first() : undefined;
    const compiled = compileMessage({ subject: draft.subject, preheader: draft.preheader, html: draft.html }, { trackOpens: false, trackClicks: false });
    const source: MessageSource = {
      compiled,
      from: { name: String(sender?.from_name ?? ''), address: String(sender?.from_email ?? '') },
      replyTo: String(sender?.reply_to_email ?? ''),
      sender: { sender_name: String(sender?.from_name ?? ''), sender_address: await this.senderAddress(sender) },
      groupId: null,
    };
    const person = row.contact_id ? await this.db('contacts').where({ id: row.contact_id }).first(CONTACT_COLUMNS) : undefined;
    return this.build(row, source, person ?? sample ?? { email: row.email }, false, budget);
  }

  /** System mail (verification, notifications) carries its whole message in the row. */
  /** The message of a system ledger row; undefined when it is void (VOID_SYSTEM_MAIL). */
  async buildSystem(row: LedgerRow): Promise<OutgoingMessage | undefined> {
    const message = await systemMessage(this.db, this.baseUrl, row, `<${this.signer.sign(TOKEN_PURPOSE.messageId, Number(row.id))}@${this.host}>`);
    if (!message || !this.signingSecret) return message;
    return { ...message, ...(await signingKeyOf(this.db, this.signingSecret, Number(row.user_id), fromAddress(message.from))) };
  }

  /** A source with its sending domain's key, when this instance signs. */
  private async withKey(row: LedgerRow, source: MessageSource): Promise<MessageSource> {
    if (!this.signingSecret) return source;
    const signing = await signingKeyOf(this.db, this.signingSecret, Number(row.user_id), source.from.address);
    return signing ? { ...source, signing } : source;
  }

  private async loadSource(row: LedgerRow): Promise<MessageSource> {
    if (row.single_send_id) {
      const send = await this.db('single_sends').where({ id: row.single_send_id }).first();
      const sender = await this.db('senders').where({ id: send.sender_id }).first();
      // An A/B test's variant overrides what it sets of the send's content; the rest is the send's.
      const variant = await this.variantOf(row);
      const compiled = compileMessage(
        {
          subject: String(variant?.subject ?? send.subject ?? ''),
          preheader: String(variant?.preheader ?? send.preheader ?? ''),
          html: await this.templateHtml(variant?.template_html ?? send.template_html, send.template_id).then((html) => (this.options.forNobody ? withoutRecipientBlocks(html) : html)),
        },
        this.tracking(send),
      );
      const fromName = String(variant?.from_name || send.sender_name || sender?.from_name || '');
      return {
        compiled: variant ? await this.numberedByUrl(compiled, { user_id: send.user_id, single_send_id: send.id }) : await this.storeLinks({ user_id: send.user_id, single_send_id: send.id }, compiled),
        from: { name: fromName, address: String(send.from_sender || sender?.from_email) },
        replyTo: String(send.reply_to || sender?.reply_to_email || send.from_sender),
        sender: {
          sender_name: fromName,
          sender_address: String(send.sender_address || (await this.senderAddress(sender))),
        },
        groupId: send.unsubscribe_group_id ? Number(send.unsubscribe_group_id) : null,
        relayId: send.relay_id ? Number(send.relay_id) : null,
      };
    }
    const schedule = await this.db('automation_schedules').where({ id: row.automation_schedule_id }).first();
    this.versions.set(`a${schedule.id}`, savedAt(schedule.updated_at));
    const automation = await this.db('automations').where({ id: schedule.automation_id }).first();
    const sender = await this.db('senders').where({ id: schedule.sender_id }).first();
    const compiled = compileMessage(
      {
        subject: String(schedule.subject ?? ''),
        preheader: '',
        html: await this.templateHtml(schedule.template_html, schedule.template_id),
      },
      this.tracking(schedule),
    );
    const numbers = await this.linkNumbers({ user_id: schedule.user_id, automation_id: schedule.automation_id, automation_schedule_id: schedule.id }, compiled.links);
    const linkVersion = await this.linkVersion(Number(schedule.id), numbers);
    return {
      compiled: renumberLinks(compiled, numbers),
      ...(linkVersion !== undefined ? { linkVersion } : {}),
      from: { name: String(sender?.from_name ?? ''), address: String(sender?.from_email ?? '') },
      replyTo: String(sender?.reply_to_email || sender?.from_email || ''),
      sender: { sender_name: String(sender?.from_name ?? ''), sender_address: await this.senderAddress(sender) },
      groupId: automation?.unsubscribe_group_id ? Number(automation.unsubscribe_group_id) : null,
      relayId: schedule.relay_id ? Number(schedule.relay_id) : null,
    };
  }

  /** The send's (or step's) tracking switches; the service's own links are never tracked. */
  private tracking(row: { track_opens?: unknown; track_clicks?: unknown }): TrackingOptions {
    return {
      trackOpens: !this.options.untracked && Number(row.track_opens ?? 1) === 1,
      trackClicks: !this.options.untracked && Number(row.track_clicks ?? 1) === 1,
      ownUrlPrefixes: [`${this.baseUrl}/unsubscribe/`, `${this.baseUrl}/c/`, `${this.baseUrl}/open/`],
    };
  }

  /** The variant of an A/B test a row renders with, or undefined; what it leaves out is null. */
  private async variantOf(row: LedgerRow): Promise<Record<string, string | null> | undefined> {
    if (row.ab_variant === null || row.ab_variant === undefined) return undefined;
    return this.db('ab_variants as v')
      .join('ab_tests as t', 't.id', 'v.ab_test_id')
      .where({ 't.single_send_id': row.single_send_id, 'v.variant': row.ab_variant })
      .first('v.subject', 'v.preheader', 'v.from_name', 'v.template_html');
  }

  /** A compiled message whose link numbers are the stored numbers of their URLs (see linkNumbers). */
  private async numberedByUrl(compiled: CompiledMessage, owner: LinkOwner): Promise<CompiledMessage> {
    return renumberLinks(compiled, await this.linkNumbers(owner, compiled.links));
  }

  /**
   * A send's links are stored once, by whichever worker compiles it first: a running send's
   * content never changes, so every worker numbers its links alike.
   */
  private async storeLinks(owner: { user_id: unknown; single_send_id: unknown }, compiled: CompiledMessage): Promise<CompiledMessage> {
    const urls = compiled.links;
    if (!this.options.recordLinks || !urls.length) return compiled;
    const created_at = nowValue();
    await this.db('send_links')
      .insert(urls.map((url, i) => ({ ...owner, n: i + 1, url, created_at })))
      .onConflict(['single_send_id', 'n'])
      .ignore();
    return compiled;
  }

  /**
   * The numbers of the links of an automation step, or of an A/B test's variant among its send's
   * links. A step can be edited while it runs, and a test's variants each have their own, so
   * links are numbered by URL, not by place: a URL known before keeps its number and a new one
   * takes the next free number, so the links of mail already sent still lead where they did.
   * Workers compiling at once may pick the same number for different URLs: only one insert
   * wins, and the loser reads the numbers again.
   */
  private async linkNumbers(owner: LinkOwner, urls: string[]): Promise<number[]> {
    const scope = 'automation_schedule_id' in owner ? 'automation_schedule_id' : 'single_send_id';
    const scopeId = 'automation_schedule_id' in owner ? owner.automation_schedule_id : owner.single_send_id;
    for (let attempt = 0; ; attempt += 1) {
      const stored: { n: number; url: string }[] = urls.length ? await this.db('send_links').where(scope, scopeId as number).orderBy('n').select('n', 'url') : [];
      const known = new Map<string, number>();
      for (const link of stored) if (!known.has(link.url)) known.set(link.url, Number(link.n));
      const last = stored.reduce((max, link) => Math.max(max, Number(link.n)), 0);
      const missing = [...new Set(urls.filter((url) => !known.has(url)))];
      if (!missing.length || !this.options.recordLinks) return urls.map((url) => known.get(url) ?? last + 1 + missing.indexOf(url));
      if (attempt === 5) throw new Error('the links of a message could not be numbered');
      const created_at = nowValue();
      await this.db('send_links')
        .insert(missing.map((url, i) => ({ ...owner, n: last + 1 + i, url, created_at })))
        .onConflict([scope, 'n'])
        .ignore();
    }
  }

  /**
   * The stored version of a step's content, as the set of link numbers it carries (numbers are
   * kept by URL across the step's versions, so a message's numbers alone would resolve links of
   * other versions too): its messages record it, and a click resolves only among its numbers.
   * Undefined when nothing is stored (a preview).
   */
  private async linkVersion(scheduleId: number, numbers: number[]): Promise<number | undefined> {
    if (!this.options.recordLinks) return undefined;
    const set = JSON.stringify([...new Set(numbers)].sort((a, b) => a - b));
    const digest = crypto.createHash('sha256').update(set).digest('hex');
    const key = { automation_schedule_id: scheduleId, digest };
    await this.db('link_versions').insert({ ...key, numbers: set, created_at: nowValue() }).onConflict(['automation_schedule_id', 'digest']).ignore();
    const row = await this.db('link_versions').where(key).first('id');
    return Number(row.id);
  }

  /** Forgets the cached automation steps of these rows that were saved since they were compiled. */
  private async dropEditedSteps(rows: LedgerRow[]): Promise<void> {
    const ids = [...new Set(rows.filter((row) => !row.single_send_id && row.automation_schedule_id && this.cache.has(`a${row.automation_schedule_id}`)).map((row) => Number(row.automation_schedule_id)))];
    if (!ids.length) return;
    for (const step of await this.db('automation_schedules').whereIn('id', ids).select('id', 'updated_at')) {
      const key = `a${step.id}`;
      if (this.versions.get(key) !== savedAt(step.updated_at)) this.cache.delete(key);
    }
  }

  /** The send's own HTML, or its design template's when it has none. */
  private async templateHtml(own: unknown, templateId: unknown): Promise<string> {
    if (typeof own === 'string' && own.trim()) return own;
    const template = await this.db('design_templates').where({ id: templateId }).first('html_code');
    return String(template?.html_code ?? '');
  }

  /** The sender's postal address on one line: street, city, state and zip, country. */
  private async senderAddress(sender: Record<string, unknown> | undefined): Promise<string> {
    if (!sender) return '';
    const city = sender.city_id ? (await this.db('cities').where({ id: sender.city_id }).first('name'))?.name : '';
    const state = sender.state_id ? (await this.db('states').where({ id: sender.state_id }).first('name'))?.name : '';
    const country = this.countries?.get(Number(sender.country_id)) ?? '';
    return [sender.company_address, sender.company_address2, city, [state, sender.zip_code].filter(Boolean).join(' '), country]
      .filter((part) => typeof part === 'string' && part.trim())
      .join(', ');
  }

  private async loadCountries(): Promise<void> {
    if (this.countries) return;
    const rows = await this.db('countries').select('id', 'name');
    this.countries = new Map(rows.map((r) => [Number(r.id), String(r.name)]));
  }

  /** Forgets the cached source of a row at the next batch: its send or step is read again then. */
  forget(row: LedgerRow): void {
    const key = sourceKey(row);
    if (key) this.stale.add(key);
  }

  /** Keeps the sources of the current batch; the rest are compiled again when next needed. */
  private trimCache(rows: LedgerRow[]): void {
    const keep = new Set(rows.map(sourceKey));
    for (const key of this.cache.keys()) {
      if (keep.has(key)) continue;
      this.cache.delete(key);
      this.versions.delete(key);
    }
  }
}

