import type { Knex } from 'knex';
import { parseJson } from '../../db/dialect';
import type { CustomFieldType } from '../../lib/constants';
import { LIMITS } from '../../lib/constants';
import { localMinute } from '../../lib/local-datetime';
import { messages } from '../../lib/validation';
import type { Ctx } from '../context';
import type { FieldsService } from './fields';

/**
 * Custom-field values of contacts: checked against the field's type, stored as text in the
 * `custom_fields` JSON column keyed by field name, and shown as the reference shapes them.
 */

export interface CustomFieldDef {
  id: number;
  field_name: string;
  field_type: CustomFieldType;
  /** The words people see for it (its label, else its name). */
  label?: string;
}

export type StoredCustomFields = Record<string, string | null>;

/** Where custom fields come from (the fields service). */
export type CustomFieldSource = Pick<FieldsService, 'listCustom'>;

/** The account's custom fields, oldest first; pass the transaction when inside one. */
export async function customFieldDefs(fields: CustomFieldSource, ctx: Ctx, trx?: Knex.Transaction): Promise<CustomFieldDef[]> {
  return (await fields.listCustom(ctx, trx)).map((f) => ({ id: f.id, field_name: f.field_name, field_type: f.field_type as CustomFieldType, label: f.label }));
}

/** Numbers as stored and compared (segments cast exactly this form on PostgreSQL). */
export const DECIMAL = /^-?\d+(\.\d+)?$/;

export type CheckedValue = { value: string | null } | { error: string };

/**
 * One value checked against its field's type and normalised: numbers as written (trimmed),
 * dates as `YYYY-MM-DDTHH:MM`, so segments compare them as text. Blank means no value.
 * `label` names the value in the message (the parameter, or the CSV column).
 */
export function checkCustomValue(def: CustomFieldDef, raw: unknown, label = def.field_name): CheckedValue {
  if (raw === undefined || raw === null) return { value: null };
  if (typeof raw !== 'string' && typeof raw !== 'number') return { error: messages.string(label) };
  const text = String(raw).trim();
  if (text === '') return { value: null };
  switch (def.field_type) {
    case 'number':
      return DECIMAL.test(text) ? { value: text } : { error: messages.numeric(label) };
    case 'datetime-local': {
      const minute = localMinute(text);
      return minute ? { value: minute } : { error: messages.date(label) };
    }
    default:
      return text.length <= LIMITS.string ? { value: text } : { error: messages.max(label, LIMITS.string) };
  }
}

/** `custom_field` of a contact record: every custom field of the account, null when it has none. */
export function customFieldObject(defs: CustomFieldDef[], stored: unknown): Record<string, { field_name: string; field_value: string | null }> | null {
  if (defs.length === 0) return null;
  const values = parseJson<StoredCustomFields>(stored, {});
  const out: Record<string, { field_name: string; field_value: string | null }> = {};
  for (const def of defs) {
    const value = values[def.field_name];
    out[def.field_name] = { field_name: def.field_name, field_value: value === undefined || value === null ? null : String(value) };
  }
  return out;
}

/**
 * The type a new custom field gets from sample values of an import column: a number when every
 * value is one, else a date when every value reads as one, else text (also for no values).
 */
export function guessFieldType(values: string[]): CustomFieldType {
  const filled = values.map((v) => v.trim()).filter((v) => v !== '');
  if (filled.length === 0) return 'text';
  const fits = (type: CustomFieldType) => filled.every((v) => !('error' in checkCustomValue({ field_name: 'x', field_type: type } as CustomFieldDef, v)));
  if (fits('number')) return 'number';
  if (fits('datetime-local')) return 'datetime-local';
  return 'text';
}

/** A custom field name for an import column (letters, digits and `_`): `Phone Number` → `Phone_Number`. */
export function fieldNameOf(header: string, maxLength: number): string {
  const name = header
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, maxLength);
  return name === '' ? 'column' : name;
}
