import fs from 'node:fs';
import type { Knex } from 'knex';
import { insertId, nowValue, parseJson } from '../../db/dialect';
import { IMPORT_JOB } from '../../lib/constants';
import { countLines } from '../../lib/csv';
import { ConflictError, NotFoundError, ValidationError } from '../../lib/errors';
import { messages } from '../../lib/validation';
import { timestamp } from '../../lib/time';
import type { ContactImportService, ImportSummary, SkippedRow } from './contact-import';
import type { ColumnMapping } from './import-rows';
import { csvLines } from '../../lib/csv';
import type { ContactTypesService } from './contact-types';
import type { Ctx, ServiceDeps } from '../context';

export type ImportStatus = (typeof IMPORT_JOB.statuses)[number];

export interface ImportJob {
  id: number;
  contact_type_id: number;
  file_name: string;
  status: ImportStatus;
  /** Data rows of the file (known once it has been counted; exact when done). */
  rows_total: number | null;
  rows_done: number;
  summary: ImportSummary | null;
  error: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export interface ImportStart {
  contactTypeId: number;
  /** The stored upload; it is removed when the import ends. */
  file: string;
  fileName: string;
  /** The column mapping and encoding chosen on the mapping page (see ImportOptions). */
  mapping?: ColumnMapping;
  encoding?: string;
}

/** Skipped rows are written in groups of this many (5 values each, well under SQLite's parameter limit). */
const SKIPPED_PER_INSERT = 500;
/** Skipped rows read per query when their CSV is streamed. */
const SKIPPED_PER_READ = 1000;

const CANCELLED = 'The upload was cancelled before its columns were chosen.';
const ABANDONED = 'The columns were never chosen, so the upload was removed. Upload the file again.';
const INTERRUPTED = 'The import stopped before it finished (the server was restarted). Upload the file again: rows already imported are updated, not repeated.';
const UNEXPECTED = 'The import stopped on an unexpected error, which has been logged.';

function jobRecord(row: Record<string, unknown>, now = Date.now()): ImportJob {
  let status = row.status as ImportStatus;
  let error = row.error === null || row.error === undefined ? null : String(row.error);
  // Progress is written at least every few seconds while rows are read: a running import
  // that has not moved for long lost its process.
  if (status === 'running' && now - new Date(String(row.updated_at)).getTime() > IMPORT_JOB.staleMs) {
    status = 'failed';
    error = INTERRUPTED;
  }
  return {
    id: Number(row.id),
    contact_type_id: Number(row.contact_type_id),
    file_name: String(row.file_name),
    status,
    rows_total: row.rows_total === null || row.rows_total === undefined ? null : Number(row.rows_total),
    rows_done: Number(row.rows_done),
    summary: parseJson<ImportSummary | null>(row.summary, null),
    error,
    created_at: timestamp(row.created_at),
    updated_at: timestamp(row.updated_at),
  };
}

interface Deps extends Pick<ServiceDeps, 'db' | 'logger'> {
  contactImport: Pick<ContactImportService, 'importFile' | 'preview'>;
  contactTypes: Pick<ContactTypesService, 'exists'>;
}

/**
 * CSV imports that run in the background of the web process (the dashboard's upload), with
 * their progress stored in `imports` for the page that polls it. The import itself is the
 * same `contactImport.importFile` the API runs inside its request.
 */
export function createImportJobsService({ db, logger, contactImport, contactTypes }: Deps) {
  const running = new Set<Promise<void>>();
  const own = (ctx: Ctx, q: Knex = db) => q('imports').where({ user_id: ctx.userId });
  const save = (id: number, patch: Record<string, unknown>) => db('imports').where({ id }).update({ ...patch, updated_at: nowValue() });

  async function run(ctx: Ctx, id: number, job: ImportStart): Promise<void> {
    try {
      await save(id, { rows_total: Math.max(0, (await countLines(job.file)) - 1) });
      let read = 0;
      let written = Date.now();
      const progress = async (rowsRead: number) => {
        read = rowsRead;
        if (Date.now() - written < IMPORT_JOB.progressEveryMs) return;
        written = Date.now();
        await save(id, { rows_done: rowsRead });
      };
      const onHeader = (header: string[]) => save(id, { header: JSON.stringify(header) });
      const onSkipped = async (rows: SkippedRow[]) => {
        const records = rows.map((r) => ({ import_id: id, row_number: r.row, reason: r.reason.slice(0, 500), cells: r.cells && JSON.stringify(r.cells) }));
        for (let i = 0; i < records.length; i += SKIPPED_PER_INSERT) await db('import_skipped_rows').insert(records.slice(i, i + SKIPPED_PER_INSERT));
      };
      const options = { progress, onHeader, onSkipped, mapping: job.mapping, encoding: job.encoding };
      const summary = await contactImport.importFile(ctx, job.contactTypeId, job.file, options);
      // The line count was an estimate (blank lines, breaks inside quotes): the bar ends full.
      await save(id, { status: 'done', rows_done: read, rows_total: read, summary: JSON.stringify(summary) });
    } catch (err) {
      const refused = err instanceof ValidationError ? Object.values(err.fields).flat().join(' ') : undefined;
      if (!refused) logger.error({ err, importId: id }, 'background import failed');
      await save(id, { status: 'failed', error: (refused ?? UNEXPECTED).slice(0, 500) }).catch((e) => logger.error({ err: e, importId: id }, 'import state not saved'));
    } finally {
      await fs.promises.rm(job.file, { force: true });
    }
  }

  /** Removes uploads left waiting for their columns longer than IMPORT_JOB.waitingMs (any account's). */
  async function sweepWaiting(): Promise<void> {
    const before = new Date(Date.now() - IMPORT_JOB.waitingMs).toISOString();
    const rows: { id: number; upload_path: string | null }[] = await db('imports').where({ status: 'mapping' }).where('updated_at', '<', before).select('id', 'upload_path');
    for (const row of rows) {
      if (row.upload_path) await fs.promises.rm(row.upload_path, { force: true });
      await save(Number(row.id), { status: 'failed', error: ABANDONED, upload_path: null });
    }
  }

  async function waiting(ctx: Ctx, id: number): Promise<{ job: ImportJob; file: string }> {
    const row = await own(ctx).where({ id }).first();
    if (!row) throw new NotFoundError();
    const job = jobRecord(row);
    if (job.status !== 'mapping' || !row.upload_path) throw new ConflictError('This import has already started.');
    return { job, file: String(row.upload_path) };
  }

  return {
    /**
     * Records an upload that waits for its columns to be chosen (the dashboard's mapping
     * step); answers its id. The contact type is checked first.
     */
    async upload(ctx: Ctx, job: ImportStart): Promise<number> {
      if (!(await contactTypes.exists(ctx, job.contactTypeId))) {
        throw ValidationError.of('contact_type_id', messages.selected('contact_type_id'));
      }
      await sweepWaiting();
      const now = nowValue();
      return insertId(db, 'imports', {
        user_id: ctx.userId,
        contact_type_id: job.contactTypeId,
        file_name: job.fileName.slice(0, 255),
        status: 'mapping',
        rows_done: 0,
        upload_path: job.file,
        created_at: now,
        updated_at: now,
      });
    },

    /** A waiting upload and what its columns would get (see contactImport.preview). */
    async columns(ctx: Ctx, id: number, options: { encoding?: string } = {}) {
      const { job, file } = await waiting(ctx, id);
      return { job, preview: await contactImport.preview(ctx, file, options) };
    },

    /** Drops a waiting upload (its file is removed; the import is recorded as stopped). */
    async cancel(ctx: Ctx, id: number): Promise<void> {
      const { file } = await waiting(ctx, id);
      const moved = await db('imports').where({ id, user_id: ctx.userId, status: 'mapping' }).update({ status: 'failed', error: CANCELLED, upload_path: null, updated_at: nowValue() });
      if (moved > 0) await fs.promises.rm(file, { force: true });
    },

    /**
     * Starts a waiting upload with the chosen columns (header → target or `ignore`). The
     * mapping is checked against the file first: it must name an email column.
     */
    async begin(ctx: Ctx, id: number, choice: { mapping: ColumnMapping; encoding?: string }): Promise<void> {
      const { job, file } = await waiting(ctx, id);
      const preview = await contactImport.preview(ctx, file, choice);
      if (!Object.values(preview.mapping).includes('email')) {
        throw ValidationError.of('mapping', 'Choose the column that holds the email addresses.');
      }
      // Only one request starts it: the status moves from `mapping` in the update itself.
      const moved = await db('imports').where({ id, user_id: ctx.userId, status: 'mapping' }).update({ status: 'running', upload_path: null, updated_at: nowValue() });
      if (moved === 0) throw new ConflictError('This import has already started.');
      const start = { contactTypeId: job.contact_type_id, file, fileName: job.file_name, mapping: choice.mapping, encoding: choice.encoding };
      const work = run(ctx, id, start).finally(() => running.delete(work));
      running.add(work);
    },

    /**
     * Records the import and starts it without waiting; answers its id. The contact type is
     * checked first, so a wrong one is refused next to its field, before anything runs.
     */
    async start(ctx: Ctx, job: ImportStart): Promise<number> {
      if (!(await contactTypes.exists(ctx, job.contactTypeId))) {
        throw ValidationError.of('contact_type_id', messages.selected('contact_type_id'));
      }
      const now = nowValue();
      const id = await insertId(db, 'imports', {
        user_id: ctx.userId,
        contact_type_id: job.contactTypeId,
        file_name: job.fileName.slice(0, 255),
        status: 'running',
        rows_done: 0,
        created_at: now,
        updated_at: now,
      });
      const work = run(ctx, id, job).finally(() => running.delete(work));
      running.add(work);
      return id;
    },

    async get(ctx: Ctx, id: number): Promise<ImportJob> {
      const row = await own(ctx).where({ id }).first();
      if (!row) throw new NotFoundError();
      return jobRecord(row);
    },

    /** The account's latest imports, newest first. */
    async recent(ctx: Ctx, limit = 5): Promise<ImportJob[]> {
      const rows: Record<string, unknown>[] = await own(ctx).orderBy('id', 'desc').limit(limit);
      const now = Date.now();
      return rows.map((row) => jobRecord(row, now));
    },

    /**
     * Every skipped row of an import as CSV text, in pieces (streamed: memory holds one read):
     * `Row` and `Reason`, then the file's own columns with the row's values, so the rows can
     * be fixed and imported again.
     */
    async *skippedCsv(ctx: Ctx, id: number): AsyncGenerator<string> {
      const job = await own(ctx).where({ id }).first('id', 'header');
      if (!job) throw new NotFoundError();
      const header = parseJson<string[]>(job.header, []);
      yield '\uFEFF' + csvLines([['Row', 'Reason', ...header]]);
      let after = 0;
      for (;;) {
        const rows: { id: number; row_number: number; reason: string; cells: string | null }[] = await db('import_skipped_rows')
          .where({ import_id: id })
          .where('id', '>', after)
          .orderBy('id')
          .limit(SKIPPED_PER_READ)
          .select('id', 'row_number', 'reason', 'cells');
        if (rows.length === 0) return;
        after = Number(rows[rows.length - 1].id);
        yield csvLines(rows.map((r) => [r.row_number, r.reason, ...parseJson<string[]>(r.cells, [])]));
      }
    },

    /** Waits for the imports this process runs (before the database closes). */
    async drain(): Promise<void> {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

export type ImportJobsService = ReturnType<typeof createImportJobsService>;
