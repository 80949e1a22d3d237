import type { Knex } from 'knex';
import { restoreOptOuts } from './erased-opt-outs';
import { insertId, jsonValue, nowValue, parseJson } from '../../db/dialect';
import { SIGNUP } from '../../lib/constants';
import { dropSignupMailSlotsBefore, takeSignupMailSlot } from '../../db/rate-limits';
import { hmac, sha256 } from '../../lib/crypto';
import { emailKey } from '../../lib/email-key';
import { timestamp } from '../../lib/time';
import { hasControlCharacters, isEmail } from '../../lib/validation';
import { queuedSignupConfirmation } from '../delivery/notices';
import { deliverNow, queueSystemMail } from '../delivery/notices';
import type { Ctx, ServiceDeps } from '../context';
import type { ContactInput, ContactsService } from './contacts';
import { checkCustomValue, CustomFieldSource, customFieldDefs } from './custom-field-values';
import { COUNTRY_FIELD, FormField, PublicForm, SignupFormsService } from './signup-forms';
import { addUnsubscribers } from '../shared/unsubscribers';

/** What a visitor typed, by form control name (`email`, `first_name`, `custom_field[age]`, `groups`). */
export type SignupBody = Record<string, unknown>;

/** The outcome of a form submission, for the public page to show. */
export type SubmitResult =
  | { kind: 'sent'; email: string }
  /** The form again, with a plain message under each refused control and what was typed. */
  | { kind: 'invalid'; errors: Record<string, string>; values: Record<string, string>; groups: number[] }
  /** SIGNUP.mailsPerAddressPerDay reached for this address: nothing sent. */
  | { kind: 'capped'; email: string };

/** What a confirmation link shows (GET) or did (POST). */
export interface Confirmation {
  state: 'pending' | 'confirmed' | 'expired';
  /** True on POST when it was confirmed before this request (confirming twice changes nothing). */
  already: boolean;
  email: string;
  formName: string;
  thankYou: string;
}

/** A confirmed signup as the contact's consent record. */
export interface ConsentRecord {
  form_id: number;
  form_name: string;
  requested_at: string | null;
  requested_ip: string;
  confirmed_at: string | null;
  confirmed_ip: string | null;
  groups: string[];
}

/** What the signups row keeps of a submission until it is confirmed. */
interface Submitted {
  text: ContactInput['text'];
  custom: Record<string, string>;
  /** The country's id, when the form asks it and the visitor chose one. */
  country?: number;
}

interface Deps extends ServiceDeps {
  forms: Pick<SignupFormsService, 'publicForm' | 'confirmationFrom'>;
  contacts: Pick<ContactsService, 'add' | 'update'>;
  fields: CustomFieldSource;
}

/** A value typed into one control ('' when absent or not text). */
const typed = (body: SignupBody, name: string) => (typeof body[name] === 'string' ? (body[name] as string).trim() : '');

/** Reads a submission against the form: plain messages for a person, keyed by control name. */
function readSubmission(form: PublicForm, body: SignupBody) {
  const errors: Record<string, string> = {};
  const values: Record<string, string> = { email: typed(body, 'email') };
  const submitted: Submitted = { text: {}, custom: {} };
  if (!values.email) errors.email = 'Enter your email address.';
  else if (!isEmail(values.email)) errors.email = 'Enter a valid email address, like name@example.com.';
  for (const field of form.fields) {
    const value = typed(body, field.name);
    values[field.name] = value;
    const problem = problemOf(field, value);
    if (problem) errors[field.name] = problem;
    else if (field.name === COUNTRY_FIELD && field.type === 'select') {
      if (value) submitted.country = Number(value);
    } else if (field.column) submitted.text[field.column] = value;
    else if (field.custom && value) {
      const checked = checkCustomValue(field.custom, value);
      if ('value' in checked && checked.value !== null) submitted.custom[field.custom.field_name] = checked.value;
    }
  }
  const offered = new Set(form.groups.map((g) => g.id));
  const groups = ([] as unknown[]).concat(body.groups ?? []).map(Number).filter((id) => offered.has(id));
  return { errors, values, submitted, groups: [...new Set(groups)] };
}

function problemOf(field: FormField, value: string): string | undefined {
  if (!value) return field.required ? (field.type === 'select' ? `Choose your ${field.label.toLowerCase()}.` : `Fill in ${field.custom ? `“${field.label}”` : `your ${field.label.toLowerCase()}`}.`) : undefined;
  if (field.options) return field.options.some((o) => String(o.value) === value) ? undefined : `Choose a ${field.label.toLowerCase()} from the list.`;
  if (hasControlCharacters(value)) return 'This contains characters that cannot be stored.';
  if (field.maxLength !== undefined && value.length > field.maxLength) return `This may not be longer than ${field.maxLength} characters.`;
  if (!field.custom || !value) return undefined;
  const checked = checkCustomValue(field.custom, value);
  if (!('error' in checked)) return undefined;
  if (field.custom.field_type === 'number') return 'Enter a number.';
  if (field.custom.field_type === 'datetime-local') return 'Enter a valid date.';
  return 'This is too long.';
}

/**
 * Double opt-in. A submission stores what was typed in `signups` and
 * mails a confirmation link through the send ledger (its token made as the mail goes out,
 * only its sha256 stored). Opening the link shows a button and changes nothing; pressing it
 * creates the contact (or updates it) through the contacts service, in one transaction with
 * the consent record and the group choices, so a welcome automation of the contact type (and
 * any rule segment the contact now matches) treats it like any other contact that joins.
 */
export function createSignupsService(deps: Deps) {
  const { db, config, forms, contacts, fields } = deps;

  async function byToken(q: Knex, token: string) {
    if (!token || token.length > 200) return undefined;
    return q('signups as s')
      .join('signup_forms as f', 'f.id', 's.form_id')
      .join('contact_types as t', 't.id', 'f.contact_type_id')
      .where('s.token_hash', sha256(token))
      .whereNull('f.deleted_at')
      .whereNull('t.deleted_at')
      .first('s.*', 'f.name as form_name', 'f.thank_you', 'f.public_id');
  }

  const confirmation = (row: Record<string, unknown>, state: Confirmation['state'], already = false): Confirmation => ({
    state,
    already,
    email: String(row.email),
    formName: String(row.form_name),
    thankYou: String(row.thank_you ?? ''),
  });
  const stateOf = (row: Record<string, unknown>): Confirmation['state'] =>
    row.confirmed_at ? 'confirmed' : new Date(String(timestamp(row.expires_at))).getTime() <= Date.now() ? 'expired' : 'pending';

  /** Takes the address off the offered groups it did not choose and puts it back on those it chose (as the preference page does). */
  async function applyGroups(trx: Knex.Transaction, userId: number, email: string, offered: number[], chosen: number[]): Promise<void> {
    const keep = new Set(chosen);
    const key = emailKey(email);
    for (const id of offered) {
      if (keep.has(id)) await trx('unsubscribe_group_recipients').where({ unsubscribe_groups_id: id, email_key: key }).delete();
      else await addUnsubscribers(trx, { userId, groupId: id }, [email]);
    }
  }

  return {
    /** The live public form, or undefined (unknown id, deleted form or contact type). */
    form: (publicId: string) => forms.publicForm(publicId),

    /**
     * A visitor's submission to `form` (as `form(publicId)` answered it) from `clientIp`: checks
     * it, stores it and mails the confirmation link. An address on the suppression list (its
     * mail bounced) is refused, since the mail could not arrive.
     */
    async submit(form: PublicForm, body: SignupBody, clientIp: string): Promise<SubmitResult> {
      const { errors, values, submitted, groups } = readSubmission(form, body);
      const userId = form.form.user_id;
      // An erased address that comes back is still suppressed, and stays unsubscribed until it confirms.
      if (!errors.email) await restoreOptOuts(db, deps.secret, userId, [emailKey(values.email)]);
      if (!errors.email && (await db('suppressed_addresses').where({ user_id: userId, email_key: emailKey(values.email) }).first('id'))) {
        errors.email = 'We cannot send email to this address. Please use another one.';
      }
      if (Object.keys(errors).length) return { kind: 'invalid', errors, values, groups };

      const email = values.email;
      const now = new Date();
      const dayAgo = now.getTime() - 24 * 3600_000;
      await dropSignupMailSlotsBefore(db, dayAgo);
      const messageId = await db.transaction(async (trx) => {
        await trx('signups').whereNull('confirmed_at').where('expires_at', '<', new Date(now.getTime() - SIGNUP.keepExpiredMs).toISOString()).delete();
        // The address as a keyed hash: the slots say how often it was mailed, not who it is.
        const slot = { userId, address: hmac(deps.secret, `signup-mail:${emailKey(email)}`) };
        if (!(await takeSignupMailSlot(trx, slot, SIGNUP.mailsPerAddressPerDay, now.getTime(), dayAgo))) return undefined;
        const id = await insertId(trx, 'signups', {
          user_id: userId,
          form_id: form.form.id,
          email,
          email_key: emailKey(email),
          submitted: jsonValue(submitted),
          group_ids: jsonValue(groups),
          requested_ip: clientIp.slice(0, 64),
          requested_at: now.toISOString(),
          expires_at: new Date(now.getTime() + SIGNUP.linkTtlMs).toISOString(),
        });
        // From the form's verified sender (its name and address) when it has one, else the service's own address.
        const from = (await forms.confirmationFrom(form.form, trx)) ?? config.mailFrom;
        const queued = await queueSystemMail(trx, userId, queuedSignupConfirmation(from, email, { id, form_name: form.form.name }));
        await trx('signups').where({ id }).update({ message_id: queued });
        return queued;
      });
      if (messageId === undefined) return { kind: 'capped', email };
      // Sent at once when the mail server takes it; otherwise the worker retries it like any system mail.
      await deliverNow(
        { db, mail: deps.mail, logger: deps.logger, secret: deps.secret, baseUrl: config.baseUrl, bounceDomain: config.bounceDomain, smtpUrl: config.smtpUrl },
        messageId,
      );
      return { kind: 'sent', email };
    },

    /** What a confirmation link shows; changes nothing (link scanners open links). Undefined for an unknown link. */
    async pending(token: string): Promise<Confirmation | undefined> {
      const row = await byToken(db, token);
      return row ? confirmation(row, stateOf(row)) : undefined;
    },

    /**
     * Confirms a signup from `clientIp`, in one transaction: the contact is added to the form's
     * contact type (or, when the address is already a contact of the account, its fields are
     * updated and it moves into that type), the offered groups it did not choose get the
     * address on their unsubscribe lists, the address leaves the global unsubscribe list (a
     * confirmed opt-in is fresh consent; a bounce suppression stays), and the signup becomes
     * the consent record. Confirming again changes nothing. Undefined for an unknown link or a
     * form (or contact type) deleted since.
     */
    async confirm(token: string, clientIp: string): Promise<Confirmation | undefined> {
      return db.transaction(async (trx) => {
        const row = await byToken(trx, token);
        if (!row) return undefined;
        const state = stateOf(row);
        if (state !== 'pending') return confirmation(row, state, state === 'confirmed');
        const form = await forms.publicForm(String(row.public_id), trx);
        if (!form) return undefined;
        const now = nowValue();
        const claimed = await trx('signups').where({ id: row.id }).whereNull('confirmed_at').update({ confirmed_at: now, confirmed_ip: clientIp.slice(0, 64) });
        if (!claimed) return confirmation(row, 'confirmed', true);

        const userId = Number(row.user_id);
        const ctx: Ctx = { userId };
        const submitted = parseJson<Submitted>(row.submitted, { text: {}, custom: {} });
        const stillCustom = new Set((await customFieldDefs(fields, ctx, trx)).map((d) => d.field_name));
        const custom = Object.fromEntries(Object.entries(submitted.custom ?? {}).filter(([name]) => stillCustom.has(name)));
        const existing = await trx('contacts').where({ user_id: userId, email_key: row.email_key }).whereNull('deleted_at').first('id');
        const input: ContactInput = {
          contact_type_id: form.form.contact_type_id,
          email: String(row.email),
          // The country the visitor chose; else a new contact has none and an existing one keeps its own.
          country: submitted.country ?? (existing ? undefined : null),
          text: submitted.text ?? {},
          custom_field: custom,
        };
        let contactId: number;
        if (existing) {
          contactId = Number(existing.id);
          await contacts.update(ctx, contactId, input, trx);
        } else {
          contactId = await contacts.add(ctx, input, trx);
        }
        await applyGroups(trx, userId, String(row.email), form.groups.map((g) => g.id), parseJson<number[]>(row.group_ids, []).map(Number));
        await trx('global_unsubscribes').where({ user_id: userId, email_key: row.email_key }).delete();
        await trx('signups').where({ id: row.id }).update({ contact_id: contactId, submitted: null });
        return confirmation(row, 'confirmed');
      });
    },

    /** The address's confirmed signups, oldest first: when, from where, through which form, which groups. */
    async consents(ctx: Ctx, email: string): Promise<ConsentRecord[]> {
      const rows = await db('signups as s')
        .join('signup_forms as f', 'f.id', 's.form_id')
        .where({ 's.user_id': ctx.userId, 's.email_key': emailKey(email) })
        .whereNotNull('s.confirmed_at')
        .orderBy('s.id')
        .select('s.*', 'f.name as form_name');
      const ids = [...new Set(rows.flatMap((r: Record<string, unknown>) => parseJson<number[]>(r.group_ids, [])))].map(Number);
      const names = new Map<number, string>(
        ids.length ? (await db('unsubscribe_groups').where({ user_id: ctx.userId }).whereIn('id', ids).select('id', 'group_name')).map((g) => [Number(g.id), String(g.group_name)]) : [],
      );
      return rows.map((r: Record<string, unknown>) => ({
        form_id: Number(r.form_id),
        form_name: String(r.form_name),
        requested_at: timestamp(r.requested_at),
        requested_ip: String(r.requested_ip),
        confirmed_at: timestamp(r.confirmed_at),
        confirmed_ip: r.confirmed_ip === null ? null : String(r.confirmed_ip),
        groups: parseJson<number[]>(r.group_ids, []).map((id) => names.get(Number(id))).filter((n): n is string => Boolean(n)),
      }));
    },
  };
}

export type SignupsService = ReturnType<typeof createSignupsService>;
