import { recordAudit } from '../shared/audit-writer';
import { withBulkWrites } from '../../db/sqlite-bulk-writes';
import { refreshStatistics } from '../../db/dialect';
import { CSV_IMPORT, CustomFieldType, RESERVED_FIELD_NAMES } from '../../lib/constants';
import { csvChunks, CsvDialect, isBlankRow, isBroken, toCsv } from '../../lib/csv';
import { ValidationError } from '../../lib/errors';
import { messages } from '../../lib/validation';
import type { ContactTypesService } from './contact-types';
import type { EventsService } from '../delivery/notices';
import type { ContactsService } from './contacts';
import type { Ctx, ServiceDeps } from '../context';
import { loadCountryResolver } from '../reference/country-lookup';
import { customFieldDefs, CustomFieldSource } from './custom-field-values';
import { emitHookEvents } from '../integrations/hook-outbox';
import { importBatchWriter, ImportBatchWriter, WriteBatch } from './import-batches';
import { ColumnMapping, customTarget, planColumns, RowReader, rowReader } from './import-rows';

/** The summary beside `message: "Imported Successfully"`, and what the import of other tools' files adds (docs/import-export.md, "Rows, batches and the summary"). */
export interface ImportSummary {
  /** Every data record of the file (blank lines are not records). */
  rows: number;
  created: number;
  updated: number;
  skipped: number;
  /** Rows whose status put their address on the global unsubscribe list. */
  unsubscribed: number;
  /** The first skipped rows; `row` counts the header as row 1. */
  errors: { row: number; reason: string }[];
  /** Rows whose address cell held several addresses (Google Contacts' `a ::: b`): the first was imported. Only when there were some. */
  several_addresses?: number;
  /** Keys of a listmonk `attributes` column that are no custom field of the account (only with such a column). */
  ignored_attributes?: string[];
}

/** Hears how many data rows have been read (blank and skipped ones included). */
export type ImportProgress = (rowsRead: number) => unknown;

/** A skipped record: its number (the header is row 1), why, and its values (null when it could not be read). */
export interface SkippedRow {
  row: number;
  reason: string;
  cells: string[] | null;
}

export interface ImportOptions {
  /** Hears the number of data rows read so far after each chunk of the file, and once more at the end. */
  progress?: ImportProgress;
  /** header → target (reserved field, custom field, special target or `ignore`): overrides the aliases. */
  mapping?: ColumnMapping;
  /** Overrides the detected encoding. */
  encoding?: string;
  /** Hears the header once read. */
  onHeader?: (header: string[]) => unknown;
  /** Hears every skipped row (in groups, once per chunk of the file). */
  onSkipped?: (rows: SkippedRow[]) => unknown;
}

/** What `POST /contacts/csv-preview` answers in `message.preview`. */
export interface ImportPreview {
  encoding: string;
  delimiter: string;
  header: string[];
  rows: string[][];
  mapping: Record<string, string | null>;
}

/** Data rows a preview shows. */
export const PREVIEW_ROWS = 5;

const NO_EMAIL_COLUMN = 'The file must have a header row with an email column.';

/**
 * Bytes of the file parsed at a time. A chunk's records live until its last row is read, while
 * each row allocates a few KiB more: with 64 KiB chunks (~550 rows) the records outlived two
 * young-generation collections and were promoted, some 0.6 MiB per collection, which grew the
 * old generation by ~90 MiB before each full collection. 16 KiB chunks die young; the event
 * loop also answers the database's round trips four times as often.
 */
const IMPORT_CHUNK_BYTES = 16 * 1024;

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
  /** Notification mail when an import finishes (docs/sending-and-tracking.md, "Event notifications"). */
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
     * The first rows of a file and the mapping its columns would get: the
     * encoding and delimiter found, the header, the first PREVIEW_ROWS data rows (blank and
     * unreadable ones left out) and header → target (a field name, or null for ignored).
     * Reads only the first chunks of the file.
     */
    async preview(ctx: Ctx, file: string, options: Pick<ImportOptions, 'encoding' | 'mapping'> = {}): Promise<ImportPreview> {
      const defs = await customFieldDefs(fields, ctx);
      let dialect: CsvDialect = { encoding: options.encoding ?? 'utf-8', delimiter: ',' };
      let header: string[] | undefined;
      const rows: string[][] = [];
      read: for await (const chunk of csvChunks(file, { encoding: options.encoding, onDialect: (d) => (dialect = d) })) {
        for (const record of chunk) {
          if (!header) {
            if (isBroken(record)) throw ValidationError.of('file', `The header row could not be read: ${record.broken}`);
            header = record;
            continue;
          }
          if (isBroken(record) || isBlankRow(record)) continue;
          rows.push(record);
          if (rows.length >= PREVIEW_ROWS) break read;
        }
      }
      if (!header) throw ValidationError.of('file', 'The file is empty.');
      const targets = planColumns(header, defs, options.mapping);
      const mapping: Record<string, string | null> = {};
      header.forEach((cell, at) => {
        const key = cell.trim();
        if (!(key in mapping)) mapping[key] = targets[at] === null ? null : (customTarget(targets[at]) ?? targets[at]);
      });
      return { encoding: dialect.encoding, delimiter: dialect.delimiter, header, rows, mapping };
    },

    /**
     * Imports a CSV file into a contact type of the account; see docs/import-export.md ("Import":
     * columns and aliases, encodings, statuses). Every record of the file is counted in
     * `rows`; each one that is not imported is skipped with its reason (the first 100 in the
     * summary, all of them to `onSkipped`).
     */
    async importFile(ctx: Ctx, contactTypeId: number, file: string, options: ImportOptions = {}): Promise<ImportSummary> {
      const { progress, onSkipped } = options;
      if (!(await contactTypes.exists(ctx, contactTypeId))) {
        throw ValidationError.of('contact_type_id', messages.selected('contact_type_id'));
      }
      const [defs, countryOf] = await Promise.all([customFieldDefs(fields, ctx), loadCountryResolver(db)]);
      const summary: ImportSummary = { rows: 0, created: 0, updated: 0, skipped: 0, unsubscribed: 0, errors: [] };
      let reader: RowReader | undefined;
      let writer: ImportBatchWriter | undefined;
      let rowNumber = 0;
      let skipped: SkippedRow[] = [];
      const skip = (reason: string, cells: string[] | null) => {
        summary.skipped += 1;
        if (summary.errors.length < CSV_IMPORT.reportedErrors) summary.errors.push({ row: rowNumber, reason });
        if (onSkipped) skipped.push({ row: rowNumber, reason, cells });
      };
      await withBulkWrites(db, async () => {
        try {
          for await (const chunk of csvChunks(file, { encoding: options.encoding, chunkBytes: IMPORT_CHUNK_BYTES })) {
            for (const record of chunk) {
              rowNumber += 1;
              if (!reader) {
                if (isBroken(record)) throw ValidationError.of('file', `The header row could not be read: ${record.broken}`);
                reader = rowReader(record, planColumns(record, defs, options.mapping), defs, countryOf);
                if (!reader) throw ValidationError.of('file', NO_EMAIL_COLUMN);
                await options.onHeader?.(record);
                const columns = reader.columns;
                const write: WriteBatch = (rows, durable, marked) =>
                  contacts.upsertBatch(ctx, contactTypeId, { columns, rows: rows.encoded(), keys: () => rows.keys(), marked }, { durable });
                writer = importBatchWriter(db, columns.indexOf('email_key'), write, summary);
                continue;
              }
              if (isBroken(record)) {
                summary.rows += 1;
                skip(record.broken, null);
                continue;
              }
              if (isBlankRow(record)) continue;
              summary.rows += 1;
              const values = reader.read(record, chunk.clean);
              if (typeof values === 'string') {
                skip(values, record);
                continue;
              }
              if (reader.unsubscribed || reader.bounced) summary.unsubscribed += 1;
              if (reader.severalAddresses) summary.several_addresses = (summary.several_addresses ?? 0) + 1;
              if (writer!.add(values, reader)) await writer!.sendFull();
            }
            if (skipped.length > 0) {
              await onSkipped!(skipped);
              skipped = [];
            }
            if (progress && rowNumber > 1) await progress(rowNumber - 1);
          }
          if (!reader) throw ValidationError.of('file', NO_EMAIL_COLUMN);
          await writer!.finish();
          if (summary.created + summary.updated >= 10_000) await refreshStatistics(db, 'contacts');
          if (reader.ignoredAttributes) summary.ignored_attributes = [...reader.ignoredAttributes].sort();
          await progress?.(Math.max(0, rowNumber - 1));
        } finally {
          await writer?.settle();
        }
      });
      await events.csvImportFinished(ctx.userId, summary);
      const { errors, ...counts } = summary;
      await recordAudit(db, ctx, {
        action: 'contacts.imported',
        recordType: 'contact_type',
        recordId: contactTypeId,
        summary: `${summary.rows} rows: ${summary.created} created, ${summary.updated} updated, ${summary.skipped} skipped`,
      });
      await emitHookEvents(db, 'import.finished', [ctx.userId], () => [
        { userId: ctx.userId, data: { contact_type_id: contactTypeId, ...counts, errors: errors.slice(0, 10) } },
      ]);
      return summary;
    },
  };
}

export type ContactImportService = ReturnType<typeof createContactImportService>;
