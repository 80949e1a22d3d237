import fs from 'node:fs';
import path from 'node:path';
import type { Request, RequestHandler } from 'express';
import multer from 'multer';
import type { Config } from '../config';
import { FieldErrors } from '../lib/errors';
import { isKnownEncoding } from '../lib/csv-decode';
import { toId } from '../lib/http';
import { isBlank, isInteger, messages, throwIfAny } from '../lib/validation';
import { param, ParamDoc } from './param-doc';

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
export function csvUploadParser(config: Pick<Config, 'dataDir' | 'maxCsvBytes'>, { fields = 20, extensions = ['.csv'] } = {}): RequestHandler {
  return multer({
    storage: multer.diskStorage({ destination: uploadDir(config) }),
    // The API's upload takes one `mapping[<header>]` per column besides the contact type and encoding.
    limits: { fileSize: config.maxCsvBytes, files: 1, fields, fieldSize: 1024 },
    fileFilter(req, file, accept) {
      const isCsv = extensions.includes(path.extname(file.originalname).toLowerCase());
      if (!isCsv) req.refusedFileType = true;
      accept(null, isCsv);
    },
  }).single('file');
}

/** How the document describes the fields checkUpload and checkPreviewUpload read. */
export function uploadParams(withContactType: boolean): ParamDoc[] {
  return [
    ...(withContactType ? [param('contact_type_id', 'body', { type: 'integer' }, 'The contact type the contacts join.', true)] : []),
    param('file', 'body', { type: 'string', format: 'binary', contentMediaType: 'text/csv' }, 'The CSV file (extension .csv).', true),
    param('encoding', 'body', { type: 'string' }, 'Extension: the file\'s encoding when it is not the one detected (e.g. windows-1252).'),
    param('mapping', 'body', { type: 'object', additionalProperties: { type: 'string' } }, 'Extension: `mapping[<column>]=<field or ignore>` overrides how a column is read.'),
  ];
}

/** The upload's fields as the reference checks them (every failing field at once); answers the contact type id. */
export function checkUpload(req: Request, fileTypes = 'csv'): number {
  const errors: FieldErrors = {};
  const typeId = req.body?.contact_type_id;
  if (isBlank(typeId)) errors.contact_type_id = [messages.required('contact_type_id')];
  else if (!isInteger(typeId)) errors.contact_type_id = [messages.integer('contact_type_id')];
  if (req.refusedFileType) errors.file = [messages.fileType('file', fileTypes)];
  else if (!req.file) errors.file = [messages.required('file')];
  Object.assign(errors, importOptionErrors(req));
  throwIfAny(errors);
  return toId(typeId) ?? 0;
}

/** The fields of a preview upload (a file, optionally `encoding` and `mapping`), checked. */
export function checkPreviewUpload(req: Request): void {
  const errors: FieldErrors = {};
  if (req.refusedFileType) errors.file = [messages.fileType('file', 'csv')];
  else if (!req.file) errors.file = [messages.required('file')];
  Object.assign(errors, importOptionErrors(req));
  throwIfAny(errors);
}

/** The optional `encoding` and `mapping[<header>]` of an upload, checked. */
function importOptionErrors(req: Request): FieldErrors {
  const errors: FieldErrors = {};
  const { encoding, mapping } = req.body ?? {};
  if (!isBlank(encoding) && (typeof encoding !== 'string' || !isKnownEncoding(encoding.trim()))) errors.encoding = [messages.selected('encoding')];
  if (mapping !== undefined && (mapping === null || typeof mapping !== 'object' || Array.isArray(mapping))) {
    errors.mapping = ['The mapping must name columns of the file: mapping[<column>]=<field or ignore>.'];
  } else if (mapping) {
    for (const [column, target] of Object.entries(mapping as Record<string, unknown>)) {
      if (typeof target !== 'string') errors[`mapping[${column}]`] = [messages.string(`mapping[${column}]`)];
    }
  }
  return errors;
}

/** The options of an import read from a checked upload: the encoding override and the column mapping. */
export function importOptionsOf(req: Request): { encoding?: string; mapping?: Record<string, string> } {
  const { encoding, mapping } = req.body ?? {};
  return {
    encoding: isBlank(encoding) ? undefined : String(encoding).trim(),
    mapping: mapping && typeof mapping === 'object' ? (mapping as Record<string, string>) : undefined,
  };
}

/**
 * Runs `work` on the request's uploaded file, then removes the file, whether `work` answered or
 * threw. The caller answers with what `work` returned, so the file is gone before the client
 * can read the answer (multer removes it itself when the upload fails).
 */
export async function thenRemoveUpload<T>(req: Request, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } finally {
    if (req.file?.path) await fs.promises.rm(req.file.path, { force: true });
  }
}
