import type { UpsertColumn } from '../../db/contact-upsert';
import { CONTACT_TEXT_COLUMNS, RESERVED_FIELD_NAMES } from '../../lib/constants';
import { aliasKey, aliasTarget, firstOfSeveral, IGNORE, isBouncedStatus, isFilledFlag, isUnsubscribedStatus, SPECIAL_TARGETS, splitFullName } from '../../lib/import-columns';
import { ValidationError } from '../../lib/errors';
import { hasControlCharacters, isEmail, messages, validEmailKey } from '../../lib/validation';
import { unescapeFormula } from '../../lib/csv';
import { currentTimeZone } from '../../lib/time-zones';
import type { CountryResolver } from '../reference/country-lookup';
import { checkCustomValue, CustomFieldDef } from './custom-field-values';

/**
 * How the columns of an import file are read: each header cell is given a target (a
 * reserved field, a custom field, one of SPECIAL_TARGETS, or nothing) by the caller's
 * mapping, else the alias table; then each row is read into the contact columns.
 */

/** A column's target: `custom:<name>` for a custom field. */
export type ColumnTarget = string | null;

/** The explicit mapping of an upload: header → target name or `ignore`. */
export type ColumnMapping = Record<string, string>;

const CUSTOM = 'custom:';

/** Targets a column gets, in header order (null: ignored). Throws on a mapping naming an unknown target or column. */
export function planColumns(header: string[], defs: CustomFieldDef[], mapping: ColumnMapping = {}): ColumnTarget[] {
  const exact = new Map(defs.map((d) => [d.field_name, d]));
  const loose = new Map(defs.map((d) => [aliasKey(d.field_name), d]));
  const errors: Record<string, string[]> = {};
  const trimmed = header.map((cell) => cell.trim());
  const chosenFor = new Map(Object.entries(mapping).map(([name, value]) => [name.trim(), value]));
  for (const name of chosenFor.keys()) {
    if (!trimmed.includes(name)) errors[`mapping[${name}]`] = [`The file has no column named ${name}.`];
  }
  const seen = new Set<string>();
  const targets = trimmed.map((cell): ColumnTarget => {
    const chosen = chosenFor.get(cell);
    let target: ColumnTarget;
    if (chosen !== undefined) {
      const value = String(chosen).trim();
      if (value === IGNORE || value === '') return null;
      const def = exact.get(value) ?? defs.find((d) => d.field_name.toLowerCase() === value.toLowerCase());
      if (def) target = CUSTOM + def.field_name;
      else if (RESERVED_FIELD_NAMES.includes(value) || value in SPECIAL_TARGETS) target = value;
      else {
        errors[`mapping[${cell}]`] = [`The column ${cell} cannot be mapped to ${value}: choose a contact field, a custom field or ignore.`];
        return null;
      }
    } else {
      const def = exact.get(cell);
      const alias = def ? undefined : aliasTarget(cell, RESERVED_FIELD_NAMES);
      const byKey = def ?? (alias ? undefined : loose.get(aliasKey(cell)));
      target = def || byKey ? CUSTOM + (def ?? byKey)!.field_name : (alias ?? null);
    }
    if (target === null) return null;
    // Status columns may be several; any other target is taken by its first column.
    if (target !== 'status' && target !== 'unsubscribed') {
      if (seen.has(target)) return null;
      seen.add(target);
    }
    return target;
  });
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  // One name is split only when the file has no first or last name of its own. Beside a last
  // name and no first name (MailerLite's `name` and `last_name`), it is the first name.
  if (seen.has('first_name')) return targets.map((t) => (t === 'full_name' ? null : t));
  if (seen.has('last_name')) return targets.map((t) => (t === 'full_name' ? 'first_name' : t));
  return targets;
}

/** The custom field a target names, if it is one. */
export function customTarget(target: ColumnTarget): string | undefined {
  return target?.startsWith(CUSTOM) ? target.slice(CUSTOM.length) : undefined;
}

type Slot =
  | { kind: 'text'; at: number; column: UpsertColumn; max: number }
  | { kind: 'alt_email'; at: number }
  | { kind: 'country'; at: number }
  | { kind: 'time_zone'; at: number }
  | { kind: 'full_name'; at: number };

export interface RowReader {
  columns: UpsertColumn[];
  /** Set by `read`: the row marks its address unsubscribed. */
  unsubscribed: boolean;
  /** Set by `read`: the row marks its address bounced or cleaned; it goes on the suppression list instead. */
  bounced: boolean;
  /** Set by `read`: an address cell held several addresses (Google's `a ::: b`); the first was taken. */
  severalAddresses: boolean;
  /** Attribute keys of the file that are no custom field (listmonk). */
  ignoredAttributes: Set<string> | undefined;
  /**
   * The row's values in `columns` order (the custom fields as an object or as its JSON text), or the reason it is skipped. `clean`: the text the row
   * was parsed from holds no control character and no U+FFFD (see `csvChunks`), so its cells
   * need not be checked for either one by one.
   */
  read(cells: string[], clean?: boolean): unknown[] | string;
}

const UNREADABLE = (label: string) =>
  `The ${label.replace(/_/g, ' ')} has characters that could not be read in the file's encoding; choose the file's encoding and upload it again.`;

/** A row reader for the planned columns, or undefined when no column holds the email. */
export function rowReader(header: string[], targets: ColumnTarget[], defs: CustomFieldDef[], countryOf: CountryResolver): RowReader | undefined {
  const emailAt = targets.indexOf('email');
  if (emailAt < 0) return undefined;
  const byName = new Map(defs.map((d) => [d.field_name, d]));
  const byLowerName = new Map(defs.map((d) => [d.field_name.toLowerCase(), d]));
  const slots: Slot[] = [];
  const custom: { at: number; def: CustomFieldDef }[] = [];
  const statusAt: number[] = [];
  const flagAt: number[] = [];
  const cleanedAt: number[] = [];
  let attributesAt = -1;
  targets.forEach((target, at) => {
    if (target === null || target === 'email') return;
    const field = customTarget(target);
    if (field !== undefined) custom.push({ at, def: byName.get(field)! });
    else if (target === 'alt_email') slots.push({ kind: 'alt_email', at });
    else if (target === 'country') slots.push({ kind: 'country', at });
    else if (target === 'time_zone') slots.push({ kind: 'time_zone', at });
    else if (target === 'full_name') slots.push({ kind: 'full_name', at });
    else if (target === 'status') statusAt.push(at);
    else if (target === 'unsubscribed') flagAt.push(at);
    else if (target === 'cleaned') cleanedAt.push(at);
    else if (target === 'attributes') attributesAt = at;
    else if (target in CONTACT_TEXT_COLUMNS) slots.push({ kind: 'text', at, column: target as UpsertColumn, max: CONTACT_TEXT_COLUMNS[target as keyof typeof CONTACT_TEXT_COLUMNS] });
  });
  const width = header.length;
  const hasCustom = custom.length > 0 || attributesAt >= 0;
  // Without an attributes column the custom fields' JSON text can be written straight from the
  // cells (numbers and dates need no escaping), unless a field's name is an array index, which
  // JSON.stringify would put first.
  const customAsText = custom.length > 0 && attributesAt < 0 && !custom.some((slot) => /^(0|[1-9]\d*)$/.test(slot.def.field_name));
  const customKeys = custom.map((slot) => JSON.stringify(slot.def.field_name));
  const columns: UpsertColumn[] = ['email', 'email_key'];
  for (const slot of slots) {
    if (slot.kind === 'full_name') columns.push('first_name', 'last_name');
    else columns.push(slot.kind === 'text' ? slot.column : slot.kind);
  }
  if (hasCustom) columns.push('custom_fields');
  const labelOf = (at: number) => {
    const target = targets[at]!;
    return customTarget(target) ?? target;
  };
  /** The trimmed cell, or undefined when decoding left a replacement character in it (never in a clean row). */
  const cell = (cells: string[], at: number, clean: boolean): string | undefined => {
    const raw = unescapeFormula((cells[at] ?? '').trim());
    return !clean && raw.includes('\uFFFD') ? undefined : raw;
  };

  // The cells this import reads, named for the reason of a skipped row (the control-character guard).
  const named: [number, string][] = [[emailAt, 'email']];
  targets.forEach((target, at) => {
    if (target !== null && target !== 'email') named.push([at, labelOf(at)]);
  });

  const reader: RowReader = {
    columns,
    unsubscribed: false,
    bounced: false,
    severalAddresses: false,
    ignoredAttributes: attributesAt >= 0 ? new Set() : undefined,
    read(cells, clean = false) {
      if (cells.length !== width && !(cells.length > width && cells.slice(width).every((c) => c.trim() === ''))) {
        return `This row has ${cells.length} values where the header has ${width}.`;
      }
      if (!clean) for (const [at, name] of named) if (hasControlCharacters(cells[at] ?? '')) return messages.control(name);
      const whole = cell(cells, emailAt, clean);
      if (whole === undefined) return UNREADABLE('email');
      const [email, several] = firstOfSeveral(whole);
      reader.severalAddresses = several;
      if (email === '') return messages.required('email');
      const key = validEmailKey(email);
      if (key === undefined) return messages.email('email');
      const values: unknown[] = [email, key];
      for (const slot of slots) {
        const raw = cell(cells, slot.at, clean);
        if (raw === undefined) return UNREADABLE(labelOf(slot.at));
        if (slot.kind === 'text') {
          if (raw.length > slot.max) return messages.max(slot.column, slot.max);
          values.push(raw);
        } else if (slot.kind === 'full_name') {
          const [first, last] = splitFullName(raw);
          if (first.length > CONTACT_TEXT_COLUMNS.first_name) return messages.max('first_name', CONTACT_TEXT_COLUMNS.first_name);
          if (last.length > CONTACT_TEXT_COLUMNS.last_name) return messages.max('last_name', CONTACT_TEXT_COLUMNS.last_name);
          values.push(first, last);
        } else if (slot.kind === 'time_zone') {
          const zone = raw === '' ? null : currentTimeZone(raw);
          if (zone === undefined) return messages.selected('time_zone');
          values.push(zone);
        } else if (slot.kind === 'alt_email') {
          const [first, several] = firstOfSeveral(raw);
          if (several) reader.severalAddresses = true;
          if (first !== '' && !isEmail(first)) return messages.email('alt_email');
          values.push(first === '' ? null : first);
        } else {
          const id = raw === '' ? null : countryOf(raw);
          if (id === undefined) return messages.selected('country');
          values.push(id);
        }
      }
      let unsubscribed = false;
      let bounced = false;
      for (const at of statusAt) if (isUnsubscribedStatus(cells[at] ?? '')) unsubscribed = true;
      for (const at of flagAt) if (isFilledFlag(cells[at] ?? '')) unsubscribed = true;
      for (const at of statusAt) if (isBouncedStatus(cells[at] ?? '')) bounced = true;
      for (const at of cleanedAt) if (isFilledFlag(cells[at] ?? '')) bounced = true;
      if (customAsText) {
        // The custom fields' JSON written directly, as JSON.stringify would write the object below.
        let json = '{';
        for (let i = 0; i < custom.length; i += 1) {
          const slot = custom[i];
          const raw = cells[slot.at] === undefined ? undefined : unescapeFormula(cells[slot.at]);
          if (!clean && raw?.includes('\uFFFD')) return UNREADABLE(slot.def.field_name);
          const checked = checkCustomValue(slot.def, raw);
          if ('error' in checked) return checked.error;
          const bare = slot.def.field_type === 'number' || slot.def.field_type === 'datetime-local';
          const value = checked.value === null ? 'null' : bare ? `"${checked.value}"` : JSON.stringify(checked.value);
          json += `${i === 0 ? '' : ','}${customKeys[i]}:${value}`;
        }
        values.push(`${json}}`);
      } else if (hasCustom) {
        const object: Record<string, string | null> = {};
        if (attributesAt >= 0) {
          const raw = cell(cells, attributesAt, clean);
          if (raw === undefined) return UNREADABLE('attributes');
          const error = readAttributes(raw, byName, byLowerName, object, reader.ignoredAttributes!);
          if (error) return error;
        }
        for (const slot of custom) {
          const raw = cells[slot.at] === undefined ? undefined : unescapeFormula(cells[slot.at]);
          if (!clean && raw?.includes('\uFFFD')) return UNREADABLE(slot.def.field_name);
          const checked = checkCustomValue(slot.def, raw);
          if ('error' in checked) return checked.error;
          // An empty column does not erase what the attributes gave.
          if (checked.value !== null || !(slot.def.field_name in object)) object[slot.def.field_name] = checked.value;
        }
        values.push(object);
      }
      reader.unsubscribed = unsubscribed && !bounced;
      reader.bounced = bounced;
      return values;
    },
  };
  return reader;
}

/** Fills `object` from a listmonk attributes cell (a JSON object); answers the reason the row is skipped, if any. */
function readAttributes(
  raw: string,
  byName: Map<string, CustomFieldDef>,
  byLowerName: Map<string, CustomFieldDef>,
  object: Record<string, string | null>,
  ignored: Set<string>,
): string | undefined {
  if (raw === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'The attributes must be a JSON object.';
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    const def = byName.get(key) ?? byLowerName.get(key.toLowerCase());
    if (!def) {
      if (ignored.size < 100) ignored.add(key);
      continue;
    }
    const text = value === null || value === undefined ? null : typeof value === 'object' ? JSON.stringify(value) : String(value);
    const checked = checkCustomValue(def, text);
    if ('error' in checked) return checked.error;
    object[def.field_name] = checked.value;
  }
  return undefined;
}
