import { bulkWriters, EncodedRow, importBatchRows, rowEncoder, UpsertColumn, UpsertCount } from '../../db/bulk';
import { refreshStatistics } from '../../db/dialect';
import { emailKey } from '../../lib/email-key';
import { CONTACT_TEXT_COLUMNS, CSV_IMPORT, CustomFieldType, RESERVED_FIELD_NAMES } from '../../lib/constants';
import { csvChunks, isBlankRow, toCsv } from '../../lib/csv';
import { ValidationError } from '../../lib/errors';
import { hasControlCharacters, isEmail, messages } from '../../lib/validation';
import type { ContactTypesService } from './contact-types';
import type { EventsService } from '../delivery/events';
import type { ContactsService } from './contacts';
import type { Ctx, ServiceDeps } from '../context';
import { CountryResolver, loadCountryResolver } from '../reference/country-lookup';
import { checkCustomValue, CustomFieldDef, customFieldDefs, CustomFieldSource } from './custom-field-values';

/** What decisions.md promises next to `message: "Imported Successfully"`. */
export interface ImportSummary {
  rows: number;
  created: number;
  updated: number;
  skipped: number;
  /** The first skipped rows; `row` counts the header as row 1. */
  errors: { row: number; reason: string }[];
}

/** Hears how many data rows have been read (blank and skipped ones included). */
export type ImportProgress = (rowsRead: number) => unknown;

type Slot =
  | { kind: 'text'; at: number; column: UpsertColumn; max: number }
  | { kind: 'alt_email'; at: number }
  | { kind: 'country'; at: number }
  | { kind: 'custom'; at: number; def: CustomFieldDef };

interface RowReader {
  columns: UpsertColumn[];
  /** The row's values in `columns` order, or the reason it is skipped. */
  read(cells: string[]): unknown[] | string;
}

/** `First Name` → `first_name`: headers are matched leniently. */
function headerKey(cell: string): string {
  return cell.trim().toLowerCase().replace(/[\s-]+/g, '_');
}

/**
 * Maps the header to contact columns (reserved names and the account's custom fields;
 * unknown columns are ignored, the first of repeated ones wins) and returns a reader for
 * the rows. Undefined when there is no email column.
 */
function rowReader(header: string[], defs: CustomFieldDef[], countryOf: CountryResolver): RowReader | undefined {
  const exact = new Map(defs.map((d) => [d.field_name, d]));
  const loose = new Map(defs.map((d) => [d.field_name.toLowerCase(), d]));
  const seen = new Set<string>();
  const slots: Slot[] = [];
  let emailAt = -1;
  header.forEach((cell, at) => {
    const key = headerKey(cell);
    const def = exact.get(cell.trim()) ?? loose.get(key);
    const name = def ? `custom:${def.field_name}` : key;
    if (seen.has(name)) return;
    seen.add(name);
    if (def) slots.push({ kind: 'custom', at, def });
    else if (key === 'email') emailAt = at;
    else if (key === 'alt_email') slots.push({ kind: 'alt_email', at });
    else if (key === 'country') slots.push({ kind: 'country', at });
    else if (key in CONTACT_TEXT_COLUMNS) slots.push({ kind: 'text', at, column: key as UpsertColumn, max: CONTACT_TEXT_COLUMNS[key as keyof typeof CONTACT_TEXT_COLUMNS] });
    else seen.delete(name);
  });
  if (emailAt < 0) return undefined;

  const plain = slots.filter((s) => s.kind !== 'custom');
  const custom = slots.filter((s): s is Extract<Slot, { kind: 'custom' }> => s.kind === 'custom');
  const columns: UpsertColumn[] = ['email', 'email_key', ...plain.map((s) => (s.kind === 'text' ? s.column : s.kind))];
  if (custom.length > 0) columns.push('custom_fields');

  // The cells this import reads, named for the reason of a skipped row.
  const named: [number, string][] = [[emailAt, 'email'], ...slots.map((s): [number, string] => [s.at, s.kind === 'text' ? s.column : s.kind === 'custom' ? s.def.field_name : s.kind])];

  return {
    columns,
    read(cells) {
      for (const [at, name] of named) if (hasControlCharacters(cells[at] ?? '')) return messages.control(name);
      const email = (cells[emailAt] ?? '').trim();
      if (email === '') return messages.required('email');
      if (!isEmail(email)) return messages.email('email');
      const values: unknown[] = [email, emailKey(email)];
      for (const slot of plain) {
        const raw = (cells[slot.at] ?? '').trim();
        if (slot.kind === 'text') {
          if (raw.length > slot.max) return messages.max(slot.column, slot.max);
          values.push(raw);
        } else if (slot.kind === 'alt_email') {
          if (raw !== '' && !isEmail(raw)) return messages.email('alt_email');
          values.push(raw === '' ? null : raw);
        } else {
          const id = raw === '' ? null : countryOf(raw);
          if (id === undefined) return messages.selected('country');
          values.push(id);
        }
      }
      if (custom.length > 0) {
        const object: Record<string, string | null> = {};
        for (const slot of custom) {
          const checked = checkCustomValue(slot.def, cells[slot.at]);
          if ('error' in checked) return checked.error;
          object[slot.def.field_name] = checked.value;
        }
        values.push(object);
      }
      return values;
    },
  };
}

/**
 * Collects rows into batches (a repeated email replaces its earlier row in the batch, as
 * a sequential upsert would) and writes each batch while the next one is being read: at
 * most `parallel` writes are in flight and one batch is waiting, so memory stays bounded
 * while the database and the parser work at the same time. A full batch is sent only when the next
 * row arrives, so the last batch is never empty: it alone is written durably (see bulk.ts).
 */
type WriteBatch = (rows: EncodedRow[], keys: string[], durable: boolean) => Promise<UpsertCount>;

interface WriterOptions {
  keyAt: number;
  batchRows: number;
  parallel: number;
  encode: (row: unknown[]) => EncodedRow;
}

function batchWriter(write: WriteBatch, { keyAt, batchRows, parallel, encode }: WriterOptions, summary: ImportSummary) {
  let rows: EncodedRow[] = [];
  let positions = new Map<string, number>();
  let lastKey = '';
  let repeats = 0;
  const inFlight: Promise<void>[] = [];
  let previousKeys = new Map<string, number>();

  /** A later row of the file must win: a batch sharing an email with the one still being written waits for it. */
  async function send(batch: EncodedRow[], keys: Map<string, number>, repeated: number, durable: boolean): Promise<void> {
    while (inFlight.length > 0 && inFlight.length >= parallel) await inFlight.shift();
    if (inFlight.length > 0 && [...keys.keys()].some((key) => previousKeys.has(key))) {
      while (inFlight.length > 0) await inFlight.shift();
    }
    previousKeys = keys;
    const writing = write(batch, [...keys.keys()], durable).then((count) => {
      summary.created += count.created;
      summary.updated += count.updated + repeated;
    });
    // Handled when awaited (by a later send or finish); this only keeps Node from calling it unhandled meanwhile.
    writing.catch(() => undefined);
    inFlight.push(writing);
    // Without concurrent writers (SQLite), reading on while a batch is written only keeps more rows alive.
    if (parallel === 0) await inFlight.shift();
  }

  return {
    /** Adds a row (values in column order); true when a full batch waits to be sent with `sendFull`. */
    add(values: unknown[]): boolean {
      const key = values[keyAt] as string;
      const earlier = positions.get(key);
      if (earlier === undefined) {
        positions.set(key, rows.length);
        rows.push(encode(values));
        lastKey = key;
      } else {
        rows[earlier] = encode(values);
        repeats += 1;
      }
      return rows.length > batchRows;
    },
    /** Sends all rows but the newest, which starts the next batch. */
    async sendFull(): Promise<void> {
      // The held-back row is the newest: the batch filled up when it was appended (a repeat adds no row).
      const next = rows.pop();
      const [batch, keys, repeated] = [rows, positions, repeats];
      keys.delete(lastKey);
      rows = [next];
      positions = new Map([[lastKey, 0]]);
      repeats = 0;
      await send(batch, keys, repeated, false);
    },
    async finish(): Promise<void> {
      // The durable last batch goes alone, after every other one has committed.
      while (inFlight.length > 0) await inFlight.shift();
      if (rows.length > 0) await send(rows, positions, repeats, true);
      while (inFlight.length > 0) await inFlight.shift();
    },
    /** Waits for writes still running (after a failure elsewhere), ignoring their outcome. */
    async settle(): Promise<void> {
      await Promise.allSettled(inFlight);
    },
  };
}

/** The example row of the sample file, by reserved column. */
const SAMPLE_ROW: Record<string, string> = {
  first_name: 'John',
  last_name: 'Doe',
  email: 'john.doe@example.com',
  alt_email: 'john@example.org',
  country: 'United States',
  state: 'California',
  city: 'San Francisco',
  address_line1: '1 Market Street',
  address_line2: 'Suite 100',
  state_province_region: 'CA',
  postal_code: '94105',
};
const SAMPLE_CUSTOM: Record<CustomFieldType, string> = { text: 'Example', number: '42', 'datetime-local': '2026-01-31T09:00' };

interface Deps extends Pick<ServiceDeps, 'db'> {
  fields: CustomFieldSource;
  contactTypes: Pick<ContactTypesService, 'exists'>;
  contacts: Pick<ContactsService, 'upsertBatch'>;
  /** Notification mail when an import finishes (decisions.md, Events). */
  events: Pick<EventsService, 'csvImportFinished'>;
}

export function createContactImportService({ db, contactTypes, fields, contacts, events }: Deps) {
  return {
    /** The sample file: every reserved column and the account's custom fields, with an example row. */
    async sample(ctx: Ctx): Promise<string> {
      const defs = await customFieldDefs(fields, ctx);
      const header = [...RESERVED_FIELD_NAMES, ...defs.map((d) => d.field_name)];
      const row = [...RESERVED_FIELD_NAMES.map((name) => SAMPLE_ROW[name] ?? ''), ...defs.map((d) => SAMPLE_CUSTOM[d.field_type] ?? '')];
      return toCsv(header, [row]);
    },

    /**
     * Imports a CSV file into a contact type of the account; see decisions.md §3, CSV import.
     * `progress`, when given, hears the number of data rows read so far after each chunk of
     * the file and once more at the end (the dashboard's progress bar).
     */
    async importFile(ctx: Ctx, contactTypeId: number, file: string, progress?: ImportProgress): Promise<ImportSummary> {
      if (!(await contactTypes.exists(ctx, contactTypeId))) {
        throw ValidationError.of('contact_type_id', messages.selected('contact_type_id'));
      }
      const [defs, countryOf] = await Promise.all([customFieldDefs(fields, ctx), loadCountryResolver(db)]);
      const summary: ImportSummary = { rows: 0, created: 0, updated: 0, skipped: 0, errors: [] };
      let reader: RowReader | undefined;
      let writer: ReturnType<typeof batchWriter> | undefined;
      let rowNumber = 0;
      try {
        for await (const chunk of csvChunks(file)) {
          for (const cells of chunk) {
            rowNumber += 1;
            if (!reader) {
              reader = rowReader(cells, defs, countryOf);
              if (!reader) throw ValidationError.of('file', 'The file must have a header row with an email column.');
              const columns = reader.columns;
              const write: WriteBatch = (rows, keys, durable) => contacts.upsertBatch(ctx, contactTypeId, { columns, rows, keys }, { durable });
              const options = { keyAt: columns.indexOf('email_key'), batchRows: importBatchRows(db), parallel: bulkWriters(db), encode: rowEncoder(db) };
              writer = batchWriter(write, options, summary);
              continue;
            }
            if (isBlankRow(cells)) continue;
            summary.rows += 1;
            const values = reader.read(cells);
            if (typeof values === 'string') {
              summary.skipped += 1;
              if (summary.errors.length < CSV_IMPORT.reportedErrors) summary.errors.push({ row: rowNumber, reason: values });
              continue;
            }
            if (writer!.add(values)) await writer!.sendFull();
          }
          if (progress && rowNumber > 1) await progress(rowNumber - 1);
        }
        if (!reader) throw ValidationError.of('file', 'The file must have a header row with an email column.');
        await writer!.finish();
        if (summary.created + summary.updated >= 10_000) await refreshStatistics(db, 'contacts');
        await progress?.(rowNumber - 1);
      } finally {
        await writer?.settle();
      }
      await events.csvImportFinished(ctx.userId, summary);
      return summary;
    },
  };
}

export type ContactImportService = ReturnType<typeof createContactImportService>;
