import fs from 'node:fs';
import type { Request, RequestHandler, Response } from 'express';
import { checkUpload, csvUploadParser } from '../http/upload';
import { streamCsv } from '../http/stream';
import { ctxOf } from '../http/context';
import type { Config } from '../config';
import { toId } from '../lib/http';
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
  const { contactImport, importJobs, contactTypes } = services;

  const formData = async (req: Request) => {
    const ctx = ctxOf(req);
    const [types, recent] = await Promise.all([contactTypes.list(ctx), importJobs.recent(ctx)]);
    return {
      title: 'Import contacts',
      types: [{ value: '', label: 'Choose a contact type' }, ...types.rows.map((t) => ({ value: t.id, label: t.name }))],
      recent: recent.map(present),
    };
  };

  routes.get('/contacts/import', async (req, res) => {
    views.page(req, res, 'contacts/import.njk', { ...(await formData(req)), values: { contact_type_id: toId(req.query.contact_type_id) } });
  });

  routes.get('/contacts/import/sample.csv', async (req, res) => {
    const csv = await contactImport.sample(ctxOf(req));
    res.status(200).attachment('contacts-sample.csv').type('text/csv; charset=utf-8').send(csv);
  });

  routes.upload('/contacts/import', uploadOwnedByRequest(csvUploadParser(config)), onInvalid('contacts/import.njk', formData), async (req: Request, res: Response) => {
    const contactTypeId = checkUpload(req);
    const id = await importJobs.start(ctxOf(req), { contactTypeId, file: req.file!.path, fileName: req.file!.originalname });
    res.locals.uploadTaken = true;
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
    const type = await contactTypes.get(ctx, job.contact_type_id).catch(() => undefined);
    views.page(req, res, 'contacts/import-status.njk', { title: `Import of ${job.file_name}`, job: present(job), typeName: type?.name }, { fragments: PROGRESS });
  });
}
