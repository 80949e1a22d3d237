import type { Config } from '../config';
import type { Services } from '../services';
import { csvFile, holds, ref, saysWith } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { checkPreviewUpload, checkUpload, csvUploadParser, importOptionsOf, thenRemoveUpload, uploadParams } from '../http/upload';
import { sendSuccess } from '../lib/envelope';

export function mountContactImport(routes: ApiRoutes, { contactImport }: Services, config: Pick<Config, 'dataDir' | 'maxCsvBytes'>): void {
  const csvUpload = csvUploadParser(config, { fields: 1000 });

  routes.get('/contacts/csv-sample/download', { summary: 'Download a sample contact CSV', response: csvFile('A CSV with the reserved columns and the account\'s custom fields.') }, async (req, res) => {
    const csv = await contactImport.sample(ctxOf(req));
    res.status(200).attachment('contacts-sample.csv').type('text/csv; charset=utf-8').send(csv);
  });

  // Extension: what an upload would read, before importing it.
  routes.upload(
    '/contacts/csv-preview',
    { summary: 'Preview what an upload would read', response: holds({ preview: ref('ImportPreview') }), params: uploadParams(false) },
    csvUpload, async (req, res) => {
    const preview = await thenRemoveUpload(req, () => {
      checkPreviewUpload(req);
      return contactImport.preview(ctxOf(req), req.file!.path, importOptionsOf(req));
    });
    sendSuccess(res, { preview });
  });

  routes.upload(
    '/contacts/upload-csv',
    { summary: 'Import contacts from a CSV file', response: saysWith('Imported Successfully', { summary: ref('ImportSummary') }), params: uploadParams(true) },
    csvUpload, async (req, res) => {
    const summary = await thenRemoveUpload(req, () => contactImport.importFile(ctxOf(req), checkUpload(req), req.file!.path, importOptionsOf(req)));
    // The reference's success envelope plus `summary` (docs/import-export.md, "Rows, batches and the summary").
    res.status(200).json({ status: 'success', message: 'Imported Successfully', summary });
  });
}
