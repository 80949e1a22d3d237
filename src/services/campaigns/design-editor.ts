import type { Knex } from 'knex';
import { toCount } from '../../db/dialect';
import { jsonText, SqlFragment } from '../../db/expressions';
import { FULL_NAME_PLACEHOLDER, LIQUID_SNIPPETS, RESERVED_FIELD_NAMES, SEND_PLACEHOLDERS } from '../../lib/constants';
import { NotFoundError } from '../../lib/errors';
import type { Turns } from '../../lib/turns';
import { isUtr } from '../../lib/utr';
import { recipientsOf } from '../delivery/ledger';
import { previewDraft, samplePerson } from '../delivery/messages';
import type { RenderedMessage } from '../../mail/render';
import { parseTemplate } from '../../mail/template';
import type { ContactsService } from '../audience/contacts';
import type { FieldsService } from '../audience/fields';
import type { Ctx, ServiceDeps } from '../context';
import type { RecipientRef } from './campaign-refs';
import { firstContactOf } from './test-sends';

/** Reserved fields a hand-added segment recipient (no contact) also has. */
const SEGMENT_RECIPIENT_COLUMNS = new Set(['first_name', 'last_name', 'email', 'country', 'state', 'city', 'address_line1']);

/** What the placeholder picker offers: the fields the account's contacts use, its custom fields, and the send's own. */
export interface PlaceholderChoices {
  contact: string[];
  custom: string[];
  send: readonly string[];
  liquid: typeof LIQUID_SNIPPETS;
}

/** A placeholder of a send and the share of its recipients for whom it renders empty. */
export interface EmptyPlaceholder {
  name: string;
  empty: number;
  recipients: number;
  /** Whole per cent, rounded up (1 of 1,000 empty shows as 1%, never 0%). */
  percent: number;
  /** The name is no field of the account: it is empty for everyone. */
  unknown: boolean;
}

export interface DraftPreviewInput {
  subject: string;
  preheader: string;
  html: string;
  senderId?: number;
  /** The design template whose HTML is previewed when `html` is empty (a step using its template). */
  templateId?: number;
  /** A contact of the account (404 otherwise); else the first match of `search`; else the audience's first contact. */
  contactId?: number;
  search?: string;
  audience: RecipientRef[];
}

export interface DraftPreview {
  message: RenderedMessage;
  contact?: { id: number; email: string };
  /** The search found nobody (the preview is then for the sample contact). */
  unmatched: boolean;
}

interface Deps extends Pick<ServiceDeps, 'db' | 'config' | 'secret'> {
  fields: Pick<FieldsService, 'listCustom'>;
  contacts: Pick<ContactsService, 'listPage'>;
  /** Whose turn it is to render (see Turns). */
  renderTurns: Turns;
}

/** `(X is null or trim(X) = '')` for one value expression. */
function isEmpty(value: SqlFragment): SqlFragment {
  return { sql: `(${value.sql} is null or trim(cast(${value.sql} as text)) = '')`, bindings: [...value.bindings, ...value.bindings] };
}

/**
 * What the visual editor needs from the domain: the placeholder picker's
 * names, the empty-placeholder warning before a send, and the live preview of a design not
 * saved yet, rendered for one contact by the sending engine's own renderer.
 */
export function createDesignEditorService({ db, config, secret, fields, contacts, renderTurns }: Deps) {
  /** The value a recipient row `r` (contact `pc`, hand-added segment recipient `ps`) gives a placeholder. */
  function valueOf(name: string, customNames: Set<string>): SqlFragment | undefined {
    const column = (c: string): SqlFragment =>
      SEGMENT_RECIPIENT_COLUMNS.has(c)
        ? { sql: `(case when r.contact_id is not null then cast(pc.${c} as text) else ps.${c} end)`, bindings: [] }
        : { sql: `pc.${c}`, bindings: [] };
    if (RESERVED_FIELD_NAMES.includes(name)) return column(name);
    if (customNames.has(name)) return jsonText(db, 'pc.custom_fields', name);
    return undefined;
  }

  return {
    /**
     * The reserved fields at least one live contact of the account has filled in (one EXISTS
     * per field, each stopping at its first match), `full_name` when a name is, every custom
     * field, and the placeholders the send fills.
     */
    async placeholders(ctx: Ctx): Promise<PlaceholderChoices> {
      const live = () => db('contacts').where({ user_id: ctx.userId }).whereNull('deleted_at');
      const probes = RESERVED_FIELD_NAMES.map((name) =>
        db.raw(`(case when exists ? then 1 else 0 end) as ??`, [
          name === 'country' ? live().whereNotNull(name).select(db.raw('1')) : live().whereNotNull(name).whereNot(name, '').select(db.raw('1')),
          name,
        ]),
      );
      const [row, custom] = await Promise.all([db.select(probes).first(), fields.listCustom(ctx)]);
      const used = RESERVED_FIELD_NAMES.filter((name) => Number(row?.[name]) === 1);
      const named = used.includes('first_name') || used.includes('last_name');
      return { contact: named ? [...used, FULL_NAME_PLACEHOLDER] : used, custom: custom.map((f) => f.field_name), send: SEND_PLACEHOLDERS, liquid: LIQUID_SNIPPETS };
    },

    /**
     * For each placeholder of a send's subject, preheader and body (the contact's, not the
     * send's own), how many of its recipients (after exclusions, unsubscribes and suppressions,
     * one per address) it is empty for: one aggregate query over the audience. Names that are
     * no field of the account count as empty for everyone. Only names empty for someone are
     * answered, most often empty first.
     */
    async emptyPlaceholders(ctx: Ctx, utr: string): Promise<EmptyPlaceholder[]> {
      const send = isUtr(utr) ? await db('single_sends').where({ user_id: ctx.userId, utr }).whereNull('deleted_at').first() : undefined;
      if (!send) throw new NotFoundError();
      const template = send.template_html && String(send.template_html).trim() ? undefined : await db('design_templates').where({ id: send.template_id }).first('html_code');
      const html = String(template ? template.html_code : send.template_html);
      const names = [...new Set([send.subject, send.preheader, html].flatMap((text) => parseTemplate(String(text ?? ''))).flatMap((part) => (typeof part === 'string' ? [] : [part.name])))]
        .filter((name) => !SEND_PLACEHOLDERS.includes(name));
      if (!names.length) return [];
      const customNames = new Set((await fields.listCustom(ctx)).map((f) => f.field_name));
      const recipients = recipientsOf(db, send);
      if (!recipients) return [];
      // One row per address, as the ledger keeps it.
      const people = recipients.select('t.email_key').min({ contact_id: 't.contact_id', segment_recipient_id: 't.segment_recipient_id' }).groupBy('t.email_key');
      const sums: Knex.Raw[] = [];
      const known: boolean[] = [];
      names.forEach((name, i) => {
        const full = name === FULL_NAME_PLACEHOLDER ? { sql: `(${isEmpty(valueOf('first_name', customNames)!).sql} and ${isEmpty(valueOf('last_name', customNames)!).sql})`, bindings: [] as Knex.Value[] } : undefined;
        const value = valueOf(name, customNames);
        known.push(Boolean(full || value));
        const empty = full ? { sql: full.sql, bindings: [] } : value ? isEmpty(value) : { sql: '1 = 1', bindings: [] };
        sums.push(db.raw(`sum(case when ${empty.sql} then 1 else 0 end) as ??`, [...empty.bindings, `e${i}`]));
      });
      const row = await db
        .from(people.as('r'))
        .leftJoin('contacts as pc', 'pc.id', 'r.contact_id')
        .leftJoin('segment_recipients as ps', 'ps.id', 'r.segment_recipient_id')
        .select(db.raw('count(*) as n'), ...sums)
        .first();
      const total = toCount(row?.n);
      if (!total) return [];
      return names
        .map((name, i) => {
          const empty = toCount(row?.[`e${i}`]);
          return { name, empty, recipients: total, percent: Math.ceil((empty * 100) / total), unknown: !known[i] };
        })
        .filter((p) => p.empty > 0)
        .sort((a, b) => b.empty - a.empty || a.name.localeCompare(b.name));
    },

    /** A design not saved yet as the worker would render it for one contact (the editor's live preview). */
    async previewDraft(ctx: Ctx, input: DraftPreviewInput): Promise<DraftPreview> {
      let contact: { id: number; email: string } | undefined;
      let unmatched = false;
      if (input.contactId !== undefined) {
        const row = await db('contacts').where({ id: input.contactId, user_id: ctx.userId }).whereNull('deleted_at').first('id', 'email');
        if (!row) throw new NotFoundError();
        contact = { id: Number(row.id), email: String(row.email) };
      } else if (input.search) {
        const match = (await contacts.listPage(ctx, { page: 1, perPage: 1 }, input.search)).rows[0];
        contact = match && { id: match.id, email: match.email };
        unmatched = !match;
      } else {
        contact = await firstContactOf(db, ctx, input.audience);
      }
      const template = !input.html.trim() && input.templateId ? await db('design_templates').where({ id: input.templateId }).first('html_code') : undefined;
      const html = template ? String(template.html_code) : input.html;
      const sample = contact ? undefined : samplePerson((await fields.listCustom(ctx)).map((f) => f.field_name));
      const message = await previewDraft(db, secret, config.baseUrl, { userId: ctx.userId, contact, sample }, { ...input, html }, renderTurns);
      return { message, contact, unmatched };
    },
  };
}

export type DesignEditorService = ReturnType<typeof createDesignEditorService>;
