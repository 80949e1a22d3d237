import fs from 'node:fs';
import path from 'node:path';
import type { Request, RequestHandler, Response } from 'express';
import { checkUpload, csvUploadParser } from '../http/upload';
import { streamCsv } from '../http/stream';
import { ctxOf } from '../http/context';
import type { Config } from '../config';
import { toId } from '../lib/http';
import { CUSTOM_FIELD_TYPES, CustomFieldType, FIELD_LABELS, LIMITS, RESERVED_FIELD_NAMES } from '../lib/constants';
import type { Ctx } from '../services/context';
import { fieldNameOf, guessFieldType } from '../services/audience/custom-field-values';
import { ValidationError } from '../lib/errors';
import { IGNORE, SPECIAL_TARGETS } from '../lib/import-columns';
import type { Services } from '../services';
import type { ImportJob } from '../services/audience/import-jobs';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const PROGRESS = { 'import-progress': 'contacts/import-macros.njk#progress' } as const;

/**
 * The upload's stored file is removed when the response ends, unless the import took it over
 * (a refused form, a missing CSRF token or a wrong contact type leave nothing behind).
 */
function uploadOwnedByRequest(parser: RequestHandler): RequestHandler {
  return (req, res, next) => {
    res.on('close', () => {
      if (req.file?.path && !res.locals.uploadTaken) void fs.promises.rm(req.file.path, { force: true });
    });
    parser(req, res, next);
  };
}

/** A mapping choice `new:<type>`: the column becomes a new custom field of that type. */
const NEW_FIELD = 'new:';
const TYPE_WORDS: Record<CustomFieldType, string> = { number: 'number', 'datetime-local': 'date', text: 'text' };

/** The contact type choice that makes a new type named after the file. */
const NEW_TYPE = 'new';

export function typeNameOf(fileName: string): string {
  const name = path.basename(fileName, path.extname(fileName)).replace(/[_\s.-]+/g, ' ').trim().slice(0, LIMITS.string - 4);
  return name === '' ? 'Imported contacts' : name;
}

const DELIMITER_NAMES: Record<string, string> = { ',': 'commas', ';': 'semicolons', '\t': 'tabs', '|': 'vertical bars' };


/** The choices of each column's select: ignore, the contact's fields, the special targets, the custom fields. */
function targetOptions(custom: Array<{ field_name: string; label: string }>) {
  return [
    { label: 'Skip', options: [{ value: IGNORE, label: 'Do not import this column' }] },
    { label: 'Contact fields', options: RESERVED_FIELD_NAMES.map((name) => ({ value: name, label: FIELD_LABELS[name] ?? name })) },
    { label: 'Special', options: Object.entries(SPECIAL_TARGETS).map(([value, label]) => ({ value, label })) },
    ...(custom.length ? [{ label: 'Your custom fields', options: custom.map((f) => ({ value: f.field_name, label: f.label })) }] : []),
  ];
}

/** What the progress fragment shows: the share done, capped by the (estimated) total. */
function present(job: ImportJob) {
  const total = job.rows_total;
  const done = total === null ? job.rows_done : Math.min(job.rows_done, total);
  return { ...job, done, percent: total ? Math.floor((100 * done) / total) : job.status === 'done' ? 100 : 0 };
}

/**
 * CSV import from the dashboard: the upload is stored, then imported in the background by the
 * import-jobs service (the same import the API runs), while its page polls the progress.
 */
export function mountContactImport(routes: WebRoutes, services: Services, views: Views, config: Config): void {
  const { contactImport, importJobs, contactTypes, fields } = services;

  const formData = async (req: Request) => {
    const ctx = ctxOf(req);
    const [types, recent] = await Promise.all([contactTypes.list(ctx), importJobs.recent(ctx)]);
    const newType = { value: NEW_TYPE, label: 'A new contact type, named after the file' };
    return {
      title: 'Import contacts',
      // An account without a type is not sent away to make one: the upload can make it.
      types: types.rows.length === 0 ? [newType] : [{ value: '', label: 'Choose a contact type' }, ...types.rows.map((t) => ({ value: t.id, label: t.name })), newType],
      noTypes: types.rows.length === 0,
      recent: recent.map(present),
    };
  };

  routes.get('/contacts/import', async (req, res) => {
    views.page(req, res, 'contacts/import.njk', { ...(await formData(req)), values: { contact_type_id: toId(req.query.contact_type_id) } });
  });

  /** A contact type named after the uploaded file ("members_export.csv" → "members export"), made unique by a number. */
  async function typeForFile(req: Request): Promise<void> {
    const ctx = ctxOf(req);
    const base = typeNameOf(req.file!.originalname);
    for (let n = 1; ; n += 1) {
      try {
        req.body.contact_type_id = String(await contactTypes.add(ctx, { name: n === 1 ? base : `${base} ${n}` }));
        return;
      } catch (err) {
        if (!(err instanceof ValidationError) || n >= 20) throw err;
      }
    }
  }

  routes.get('/contacts/import/sample.csv', async (req, res) => {
    const csv = await contactImport.sample(ctxOf(req));
    res.status(200).attachment('contacts-sample.csv').type('text/csv; charset=utf-8').send(csv);
  });

  // The upload waits for its columns to be chosen on the next page.
  // The dashboard also takes Excel's "Unicode Text" (.txt: UTF-16, tab separated); the API keeps the reference's .csv.
  const upload = csvUploadParser(config, { extensions: ['.csv', '.txt'] });
  routes.upload('/contacts/import', uploadOwnedByRequest(upload), onInvalid('contacts/import.njk', formData), async (req: Request, res: Response) => {
    if (req.body?.contact_type_id === NEW_TYPE && req.file && !req.refusedFileType) await typeForFile(req);
    const contactTypeId = checkUpload(req, 'csv, txt');
    const id = await importJobs.upload(ctxOf(req), { contactTypeId, file: req.file!.path, fileName: req.file!.originalname });
    res.locals.uploadTaken = true;
    views.redirect(res, `/contacts/import/${id}/columns`);
  });

  /** The mapping page's data: the file's first rows and one choice per column, pre-filled from the aliases. */
  const columnsData = async (req: Request) => {
    const ctx = ctxOf(req);
    const id = toId(req.params.id) ?? 0;
    const { job, preview } = await importJobs.columns(ctx, id);
    const [defs, type] = await Promise.all([fields.listCustom(ctx), contactTypes.get(ctx, job.contact_type_id).catch(() => undefined)]);
    const chosen = Array.isArray(req.body?.column) ? (req.body.column as unknown[]).map(String) : undefined;
    return {
      title: `Columns of ${job.file_name}`,
      job,
      typeName: type?.name,
      preview,
      columns: preview.header.map((name, at) => {
        const values = preview.rows.map((row) => row[at] ?? '').filter((v) => v.trim() !== '');
        const guess = guessFieldType(values);
        const fieldName = fieldNameOf(name, LIMITS.fieldName);
        return {
          at,
          name,
          examples: values.slice(0, 3),
          guessWord: TYPE_WORDS[guess],
          // A column no field takes can become a new custom field, of the type its values suggest.
          newFields: CUSTOM_FIELD_TYPES.map((type) => ({
            value: `${NEW_FIELD}${type}`,
            label: `New ${TYPE_WORDS[type]} field “${name.trim() || fieldName}”${type === guess ? ' (as the values suggest)' : ''}`,
          })).sort((a, b) => Number(b.value === `${NEW_FIELD}${guess}`) - Number(a.value === `${NEW_FIELD}${guess}`)),
          target: chosen?.[at] ?? preview.mapping[name.trim()] ?? IGNORE,
        };
      }),
      targets: targetOptions(defs),
      delimiterName: DELIMITER_NAMES[preview.delimiter] ?? preview.delimiter,
    };
  };

  /**
   * Makes the custom field a column was given on the mapping page and answers its name; a field
   * of that name already there (an earlier import made it, say) is used as it is.
   */
  async function newField(ctx: Ctx, header: string, type: string): Promise<string> {
    const name = fieldNameOf(header, LIMITS.fieldName);
    if (!(CUSTOM_FIELD_TYPES as readonly string[]).includes(type)) throw ValidationError.of('column', `Choose what the column ${header} holds.`);
    const existing = (await fields.listCustom(ctx)).find((f) => f.field_name.toLowerCase() === name.toLowerCase());
    if (existing) return existing.field_name;
    // The header is what the person knows the column by: it stays the field's label.
    await fields.addCustom(ctx, { field_name: name, field_type: type as CustomFieldType, label: header.trim() });
    return name;
  }

  routes.get('/contacts/import/:id/columns', async (req, res) => {
    const job = await importJobs.get(ctxOf(req), toId(req.params.id) ?? 0);
    if (job.status !== 'mapping') return views.redirect(res, `/contacts/import/${job.id}`);
    views.page(req, res, 'contacts/import-columns.njk', await columnsData(req));
  });

  routes.post('/contacts/import/:id/cancel', async (req, res) => {
    const ctx = ctxOf(req);
    const job = await importJobs.get(ctx, toId(req.params.id) ?? 0);
    await importJobs.cancel(ctx, job.id);
    views.redirect(res, `/contacts/import?contact_type_id=${job.contact_type_id}`, 'The upload was removed.');
  });

  routes.post('/contacts/import/:id/columns', onInvalid('contacts/import-columns.njk', columnsData), async (req, res) => {
    const ctx = ctxOf(req);
    const id = toId(req.params.id) ?? 0;
    const { preview } = await importJobs.columns(ctx, id);
    const chosen = Array.isArray(req.body?.column) ? (req.body.column as unknown[]) : [];
    const mapping: Record<string, string> = {};
    for (const [at, name] of preview.header.entries()) {
      const key = name.trim();
      if (key in mapping) continue;
      const choice = typeof chosen[at] === 'string' && chosen[at] !== '' ? (chosen[at] as string) : IGNORE;
      mapping[key] = choice.startsWith(NEW_FIELD) ? await newField(ctx, name, choice.slice(NEW_FIELD.length)) : choice;
    }
    await importJobs.begin(ctx, id, { mapping });
    views.redirect(res, `/contacts/import/${id}`);
  });

  // Every skipped row (not only the first 100 of the summary), with its reason and values.
  routes.get('/contacts/import/:id/skipped.csv', async (req, res) => {
    const id = toId(req.params.id) ?? 0;
    await streamCsv(res, `skipped-rows-${id}.csv`, importJobs.skippedCsv(ctxOf(req), id));
  });

  // The import's page; while it runs, its progress fragment asks for itself again.
  routes.get('/contacts/import/:id', async (req, res) => {
    const ctx = ctxOf(req);
    const job = await importJobs.get(ctx, toId(req.params.id) ?? 0);
    if (job.status === 'mapping') return views.redirect(res, `/contacts/import/${job.id}/columns`);
    const type = await contactTypes.get(ctx, job.contact_type_id).catch(() => undefined);
    views.page(req, res, 'contacts/import-status.njk', { title: `Import of ${job.file_name}`, job: present(job), typeName: type?.name }, { fragments: PROGRESS });
  });
}
