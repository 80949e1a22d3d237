import fs from 'node:fs';
import path from 'node:path';
import multer from 'multer';
import type { Config } from '../config';
import { FieldErrors } from '../lib/errors';
import { toId } from '../lib/http';
import { isBlank, isInteger, messages, throwIfAny } from '../lib/validation';
import type { Services } from '../services';
import { ApiRoutes, ctxOf } from './routes';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set when the upload's file was refused for its extension. */
      refusedFileType?: boolean;
    }
  }
}

/** Where uploads wait while they are imported; each is removed when its response ends. */
export function uploadDir(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'tmp', 'uploads');
}

export function mountContactImport(routes: ApiRoutes, { contactImport }: Services, config: Pick<Config, 'dataDir' | 'maxCsvBytes'>): void {
  const csvUpload = multer({
    storage: multer.diskStorage({ destination: uploadDir(config) }),
    limits: { fileSize: config.maxCsvBytes, files: 1, fields: 20, fieldSize: 1024 },
    fileFilter(req, file, accept) {
      const isCsv = path.extname(file.originalname).toLowerCase() === '.csv';
      if (!isCsv) req.refusedFileType = true;
      accept(null, isCsv);
    },
  }).single('file');

  routes.get('/contacts/csv-sample/download', async (req, res) => {
    const csv = await contactImport.sample(ctxOf(req));
    res.status(200).attachment('contacts-sample.csv').type('text/csv; charset=utf-8').send(csv);
  });

  routes.upload('/contacts/upload-csv', csvUpload, async (req, res) => {
    // The file is removed before any answer leaves, success or failure (multer removes it
    // itself when the upload fails).
    try {
      const errors: FieldErrors = {};
      const typeId = req.body?.contact_type_id;
      if (isBlank(typeId)) errors.contact_type_id = [messages.required('contact_type_id')];
      else if (!isInteger(typeId)) errors.contact_type_id = [messages.integer('contact_type_id')];
      if (req.refusedFileType) errors.file = [messages.fileType('file', 'csv')];
      else if (!req.file) errors.file = [messages.required('file')];
      throwIfAny(errors);

      const summary = await contactImport.importFile(ctxOf(req), toId(typeId) ?? 0, req.file!.path);
      // decisions.md: the reference's success envelope plus `summary`.
      res.status(200).json({ status: 'success', message: 'Imported Successfully', summary });
    } finally {
      if (req.file?.path) await fs.promises.rm(req.file.path, { force: true });
    }
  });
}
