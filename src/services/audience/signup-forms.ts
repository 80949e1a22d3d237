import type { Knex } from 'knex';
import crypto from 'node:crypto';
import { insertId, jsonValue, nowValue, parseJson } from '../../db/dialect';
import { CONTACT_TEXT_COLUMNS, ContactTextColumn, CustomFieldType, FIELD_LABELS } from '../../lib/constants';
import { FieldErrors, NotFoundError } from '../../lib/errors';
import { timestamp } from '../../lib/time';
import { messages, throwIfAny } from '../../lib/validation';
import type { Ctx, ServiceDeps } from '../context';
import { defaultSender } from '../shared/default-sender';
import type { ContactTypesService } from './contact-types';
import { customFieldDefs, CustomFieldDef, CustomFieldSource } from './custom-field-values';
import { audited } from '../shared/audit-writer';

/** What the dashboard saves for a form. */
export interface SignupFormInput {
  name: string;
  contact_type_id: number;
  /** Contact columns (CONTACT_TEXT_COLUMNS), `country` and custom field names the form asks, besides the email. */
  fields: string[];
  /** Those of `fields` a visitor must fill in; absent: none. */
  required_fields?: string[];
  /** `is_display` groups of the account the form offers to opt into. */
  group_ids: number[];
  thank_you: string;
  /** The verified sender the confirmation mail comes from; null or absent: the service's own address. */
  sender_id?: number | null;
}

export interface SignupFormRecord extends SignupFormInput {
  sender_id: number | null;
  required_fields: string[];
  id: number;
  user_id: number;
  public_id: string;
  created_at: string | null;
  updated_at: string | null;
}

/** A verified sender a form's confirmation mail may come from. */
export interface SenderChoice {
  id: number;
  nickname: string;
  from_name: string;
  from_email: string;
}

/** A field as the public form shows it: `name` is the form control's name. */
export interface FormField {
  name: string;
  label: string;
  type: 'text' | 'number' | 'datetime-local' | 'select';
  /** The contact column, or the custom field (`custom`); both undefined for the country. */
  column: ContactTextColumn | undefined;
  custom: CustomFieldDef | undefined;
  maxLength: number | undefined;
  /** The visitor must fill it in. */
  required: boolean;
  /** The choices of a select (the country's): value is the country's id. */
  options?: CountryChoice[];
}

/** A country a form's country select offers. */
export interface CountryChoice {
  value: number;
  label: string;
}

/** The form field name of the contact's country. */
export const COUNTRY_FIELD = 'country';

export interface OfferedGroup {
  id: number;
  group_name: string;
  description: string;
}

/** A live form with what its public page shows: its fields and the groups it offers now. */
export interface PublicForm {
  form: SignupFormRecord;
  fields: FormField[];
  groups: OfferedGroup[];
}

/** The contact columns a form may ask, in the order it offers them, with their labels (the email is always asked). */
const FORM_TEXT_ORDER: ContactTextColumn[] = ['first_name', 'last_name', 'address_line1', 'address_line2', 'city', 'state', 'state_province_region', 'postal_code'];
export const FORM_TEXT_FIELDS = Object.fromEntries(FORM_TEXT_ORDER.map((column) => [column, FIELD_LABELS[column]])) as Record<ContactTextColumn, string>;

/** The label of the country field, on the dashboard and the public form. */
export const COUNTRY_LABEL = FIELD_LABELS.country;

const isTextColumn = (name: string): name is ContactTextColumn => Object.prototype.hasOwnProperty.call(CONTACT_TEXT_COLUMNS, name);

export function signupFormRecord(row: Record<string, unknown>): SignupFormRecord {
  return {
    id: Number(row.id),
    user_id: Number(row.user_id),
    public_id: String(row.public_id),
    name: String(row.name),
    contact_type_id: Number(row.contact_type_id),
    fields: parseJson<string[]>(row.fields, []),
    required_fields: parseJson<string[]>(row.required_fields, []),
    group_ids: parseJson<number[]>(row.group_ids, []).map(Number),
    thank_you: String(row.thank_you ?? ''),
    sender_id: row.sender_id === null || row.sender_id === undefined ? null : Number(row.sender_id),
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

/**
 * The form's fields in its own order; custom fields deleted since are left out. `required`
 * names those the visitor must fill in; `countries` are the country select's choices.
 */
export function formFields(names: string[], defs: CustomFieldDef[], required: string[] = [], countries: CountryChoice[] = []): FormField[] {
  const byName = new Map(defs.map((d) => [d.field_name, d]));
  const must = new Set(required);
  const shown: FormField[] = [];
  for (const name of names) {
    if (name === COUNTRY_FIELD) {
      shown.push({ name, label: COUNTRY_LABEL, type: 'select', column: undefined, custom: undefined, maxLength: undefined, required: must.has(name), options: countries });
      continue;
    }
    if (isTextColumn(name)) {
      shown.push({ name, label: FORM_TEXT_FIELDS[name], type: 'text', column: name, custom: undefined, maxLength: CONTACT_TEXT_COLUMNS[name], required: must.has(name) });
      continue;
    }
    const def = byName.get(name);
    if (def) shown.push({ name: `custom_field[${name}]`, label: def.label || name, type: def.field_type as CustomFieldType, column: undefined, custom: def, maxLength: undefined, required: must.has(name) });
  }
  return shown;
}

/** The reference's countries, as the contact forms list them. */
export async function countryChoices(q: Knex): Promise<CountryChoice[]> {
  return (await q('countries').orderBy('id').select('id', 'name')).map((c: Record<string, unknown>) => ({ value: Number(c.id), label: String(c.name) }));
}

interface Deps extends Pick<ServiceDeps, 'db'> {
  fields: CustomFieldSource;
  contactTypes: Pick<ContactTypesService, 'exists'>;
}

/**
 * Signup forms of the dashboard: one per contact type or more, each with
 * the fields it asks, the groups it offers and its thank-you text, reached publicly at
 * `/subscribe/<public_id>`. What visitors submit is the signups service's.
 */
export function createSignupFormsService({ db, fields, contactTypes }: Deps) {
  const live = (ctx: Ctx, q: Knex = db) => q('signup_forms').where({ user_id: ctx.userId }).whereNull('deleted_at');
  /** The account's groups a form may offer: those shown on preference pages. */
  const displayGroups = (userId: number, q: Knex = db) =>
    q('unsubscribe_groups').where({ user_id: userId, is_display: 1 }).orderBy('id').select('id', 'group_name', 'description');

  /** The account's verified senders: a confirmation mail comes only from an address it proved it owns. */
  const verifiedSenders = async (userId: number, q: Knex = db): Promise<SenderChoice[]> =>
    (await q('senders').where({ user_id: userId, is_verified: 1 }).whereNull('deleted_at').orderBy('id').select('id', 'nickname', 'from_name', 'from_email')).map(
      (r: Record<string, unknown>) => ({ id: Number(r.id), nickname: String(r.nickname), from_name: String(r.from_name ?? ''), from_email: String(r.from_email) }),
    );

  async function check(ctx: Ctx, input: SignupFormInput): Promise<void> {
    const errors: FieldErrors = {};
    const [typeOk, defs, groups] = await Promise.all([contactTypes.exists(ctx, input.contact_type_id), customFieldDefs(fields, ctx), displayGroups(ctx.userId)]);
    if (!typeOk) errors.contact_type_id = [messages.selected('contact_type_id')];
    const known = new Set([...Object.keys(CONTACT_TEXT_COLUMNS), COUNTRY_FIELD, ...defs.map((d) => d.field_name)]);
    // Only the dashboard saves forms, so these speak to a person rather than name parameters.
    if (input.fields.some((name) => !known.has(name))) errors.fields = ['Choose the fields from the list.'];
    const asked = new Set(input.fields);
    if ((input.required_fields ?? []).some((name) => !asked.has(name))) errors.required_fields = ['A required field must also be ticked under “Fields to ask”.'];
    const offered = new Set(groups.map((g: { id: unknown }) => Number(g.id)));
    if (input.group_ids.some((id) => !offered.has(id))) errors.group_ids = ['Choose groups that are shown on preference pages.'];
    if (input.sender_id != null && !(await verifiedSenders(ctx.userId)).some((s) => s.id === input.sender_id)) errors.sender_id = ['Choose one of your verified senders.'];
    throwIfAny(errors);
  }

  const columns = (input: SignupFormInput) => ({
    name: input.name.trim(),
    contact_type_id: input.contact_type_id,
    fields: jsonValue([...new Set(input.fields)]),
    required_fields: jsonValue([...new Set(input.required_fields ?? [])]),
    group_ids: jsonValue([...new Set(input.group_ids)]),
    thank_you: input.thank_you.trim(),
    sender_id: input.sender_id ?? null,
  });

  return {
    /** The account's live forms, newest first, with their contact type's name. */
    async list(ctx: Ctx): Promise<Array<SignupFormRecord & { contact_type_name: string | null }>> {
      const rows = await db('signup_forms')
        .where('signup_forms.user_id', ctx.userId)
        .whereNull('signup_forms.deleted_at')
        .leftJoin('contact_types as t', function on() {
          this.on('t.id', '=', 'signup_forms.contact_type_id').andOnNull('t.deleted_at');
        })
        .orderBy('signup_forms.id', 'desc')
        .select('signup_forms.*', 't.name as contact_type_name');
      return rows.map((row: Record<string, unknown>) => ({ ...signupFormRecord(row), contact_type_name: row.contact_type_name === null ? null : String(row.contact_type_name) }));
    },

    async get(ctx: Ctx, id: number): Promise<SignupFormRecord> {
      const row = await live(ctx).where({ id }).first();
      if (!row) throw new NotFoundError();
      return signupFormRecord(row);
    },

    /** The senders a form's confirmation mail may come from. */
    senderChoices(ctx: Ctx): Promise<SenderChoice[]> {
      return verifiedSenders(ctx.userId);
    },

    /** The sender a new form's confirmation mail comes from unless the person picks another: the account's default sender. */
    async proposedSender(ctx: Ctx): Promise<number | null> {
      return (await defaultSender(db, ctx.userId))?.id ?? null;
    },

    /**
     * Whom a form's confirmation mail comes from: its sender while that is still a verified
     * sender of the account, else undefined (the service's own address).
     */
    async confirmationFrom(form: SignupFormRecord, q: Knex = db): Promise<{ name: string; address: string } | undefined> {
      if (form.sender_id === null) return undefined;
      const sender = (await verifiedSenders(form.user_id, q)).find((s) => s.id === form.sender_id);
      return sender && { name: sender.from_name, address: sender.from_email };
    },

    /** The groups a form of the account may offer (`is_display` ones). */
    async offerableGroups(ctx: Ctx): Promise<OfferedGroup[]> {
      return (await displayGroups(ctx.userId)).map((g: Record<string, unknown>) => ({ id: Number(g.id), group_name: String(g.group_name), description: String(g.description) }));
    },

    async add(ctx: Ctx, input: SignupFormInput): Promise<number> {
      await check(ctx, input);
      const now = nowValue();
      return audited(db, ctx, (trx) => insertId(trx, 'signup_forms', {
        ...columns(input),
        user_id: ctx.userId,
        public_id: crypto.randomBytes(8).toString('hex'),
        created_at: now,
        updated_at: now,
      }), (id) => ({ action: 'signup_form.created', recordType: 'signup_form', recordId: id, summary: input.name.trim() }));
    },

    async update(ctx: Ctx, id: number, input: SignupFormInput): Promise<void> {
      await this.get(ctx, id);
      await check(ctx, input);
      await audited(db, ctx, async (trx) => {
        const changed = await live(ctx, trx).where({ id }).update({ ...columns(input), updated_at: nowValue() });
        if (!changed) throw new NotFoundError();
      }, () => ({ action: 'signup_form.updated', recordType: 'signup_form', recordId: id, summary: input.name.trim() }));
    },

    /** Soft-deletes the form: its page and the links of its unconfirmed signups stop working; consent keeps its name. */
    async remove(ctx: Ctx, id: number): Promise<void> {
      const now = nowValue();
      await audited(db, ctx, async (trx) => {
        const changed = await live(ctx, trx).where({ id }).update({ deleted_at: now, updated_at: now });
        if (!changed) throw new NotFoundError();
      }, () => ({ action: 'signup_form.deleted', recordType: 'signup_form', recordId: id }));
    },

    /**
     * The live form with this public id, its fields and the groups it offers now (those of its
     * groups still shown on preference pages); undefined when there is none, or its contact
     * type is gone.
     */
    async publicForm(publicId: string, q: Knex = db): Promise<PublicForm | undefined> {
      if (!/^[0-9a-f]{16}$/i.test(publicId)) return undefined;
      const row = await q('signup_forms as f')
        .join('contact_types as t', 't.id', 'f.contact_type_id')
        .where('f.public_id', publicId.toLowerCase())
        .whereNull('f.deleted_at')
        .whereNull('t.deleted_at')
        .whereRaw('t.user_id = f.user_id')
        .first('f.*');
      if (!row) return undefined;
      const form = signupFormRecord(row);
      const ctx = { userId: form.user_id };
      const asksCountry = form.fields.includes(COUNTRY_FIELD);
      const [defs, groups, countries] = await Promise.all([
        customFieldDefs(fields, ctx, q as Knex.Transaction),
        displayGroups(form.user_id, q),
        asksCountry ? countryChoices(q) : Promise.resolve([]),
      ]);
      const offered = new Set(form.group_ids);
      return {
        form,
        fields: formFields(form.fields, defs, form.required_fields, countries),
        groups: groups
          .filter((g: { id: unknown }) => offered.has(Number(g.id)))
          .map((g: Record<string, unknown>) => ({ id: Number(g.id), group_name: String(g.group_name), description: String(g.description) })),
      };
    },
  };
}

export type SignupFormsService = ReturnType<typeof createSignupFormsService>;
