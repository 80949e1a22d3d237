import path from 'node:path';
import type { Request, RequestHandler } from 'express';
import multer from 'multer';
import type { Config } from '../config';
import { FieldErrors } from '../lib/errors';
import { toId } from '../lib/http';
import { isBlank, isInteger, messages, throwIfAny } from '../lib/validation';

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

/** The multipart parser of a CSV upload (`file`), stored under uploadDir; the API and the dashboard share it. */
export function csvUploadParser(config: Pick<Config, 'dataDir' | 'maxCsvBytes'>): RequestHandler {
  return multer({
    storage: multer.diskStorage({ destination: uploadDir(config) }),
    limits: { fileSize: config.maxCsvBytes, files: 1, fields: 20, fieldSize: 1024 },
    fileFilter(req, file, accept) {
      const isCsv = path.extname(file.originalname).toLowerCase() === '.csv';
      if (!isCsv) req.refusedFileType = true;
      accept(null, isCsv);
    },
  }).single('file');
}

/** The upload's fields as the reference checks them (every failing field at once); answers the contact type id. */
export function checkUpload(req: Request): number {
  const errors: FieldErrors = {};
  const typeId = req.body?.contact_type_id;
  if (isBlank(typeId)) errors.contact_type_id = [messages.required('contact_type_id')];
  else if (!isInteger(typeId)) errors.contact_type_id = [messages.integer('contact_type_id')];
  if (req.refusedFileType) errors.file = [messages.fileType('file', 'csv')];
  else if (!req.file) errors.file = [messages.required('file')];
  throwIfAny(errors);
  return toId(typeId) ?? 0;
}
