import fs from 'node:fs';
import type { Config } from '../config';
import { sendSuccess } from '../lib/envelope';
import { messages, throwIfAny } from '../lib/validation';
import { toId } from '../lib/http';
import { validate, field } from '../http/validation';
import type { Services } from '../services';
import { utrField, utrOf } from '../http/campaign-params';
import { param } from '../http/param-doc';
import { csvUploadParser, thenRemoveUpload } from '../http/upload';
import { holds, SuccessDoc } from './describe';
import { uuid } from './schema-words';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';

const graphSchema = { type: 'object', description: '`{"start": "<node id>", "nodes": {"<id>": {...}}}` (docs/journeys.md)' } as const;

/** An optional `version` (a whole number from 1). */
const versionOf = (value: unknown): number | undefined => (value === undefined || value === '' ? undefined : Number(value));

/** Extension: an automation's journey, a graph of nodes drawn from its steps (docs/journeys.md). */
export function mountJourneys(routes: ApiRoutes, { journeys }: Services, config: Pick<Config, 'dataDir' | 'maxCsvBytes'>): void {
  const jsonUpload = csvUploadParser(config, { fields: 5, extensions: ['.json'] });

  routes.post(
    '/automations/journey/save',
    { summary: 'Save an automation\'s journey as a new version (extension)', response: holds({ message: { const: 'Journey Saved' }, version: { type: 'integer' } }, '`message.message`: \'Journey Saved\'; `message.version`: the version saved.') },
    validate(utrField(), field('graph').required().describe({ type: 'string' }, 'The graph as JSON text (or a JSON object).')),
    async (req, res) => {
      const version = await journeys.save(ctxOf(req), utrOf(req), req.body.graph);
      sendSuccess(res, { message: 'Journey Saved', version });
    },
  );

  routes.get(
    '/automations/journey',
    { summary: 'Show an automation\'s journey and its versions (extension)', response: holds({ version: { type: 'integer' }, graph: graphSchema, versions: { type: 'array', items: { type: 'object' } } }) },
    validate(utrField()),
    async (req, res) => {
      sendSuccess(res, await journeys.get(ctxOf(req), utrOf(req)));
    },
  );

  routes.get(
    '/automations/journey/report',
    { summary: 'Counts per node of a journey version (extension)', response: holds({ version: { type: 'integer' }, nodes: { type: 'array', items: { type: 'object' } } }) },
    validate(utrField(), field('version', 'query').optional().integer(1)),
    async (req, res) => {
      sendSuccess(res, await journeys.report(ctxOf(req), utrOf(req), versionOf(req.query.version)));
    },
  );

  const fileDoc: SuccessDoc = { description: 'The journey and its emails\' content as one JSON file (docs/journeys.md, "Export and import").', content: { 'application/json': { schema: { type: 'object' } } } };
  routes.get('/automations/journey/export', { summary: 'Download an automation\'s journey with its emails (extension)', response: fileDoc }, validate(utrField()), async (req, res) => {
    const { name, file } = await journeys.exportFile(ctxOf(req), utrOf(req));
    const safe = name.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'journey';
    res.status(200).attachment(`${safe}.journey.json`).type('application/json; charset=utf-8').send(JSON.stringify(file, null, 2));
  });

  routes.upload(
    '/automations/journey/import',
    {
      summary: 'Make a draft automation from an exported journey (extension)',
      response: holds({ utr: uuid }, '`message.utr`: the new draft automation\'s.'),
      params: [
        param('file', 'body', { type: 'string', format: 'binary', contentMediaType: 'application/json' }, 'The exported journey (extension .json).', true),
        param('sender_id', 'body', { type: 'integer' }, 'The sender of the imported emails; the account\'s first sender when absent. Choose each email\'s sender, the target and the group afterwards.'),
      ],
    },
    jsonUpload,
    async (req, res) => {
      const utr = await thenRemoveUpload(req, async () => {
        const errors: Record<string, string[]> = {};
        if (req.refusedFileType) errors.file = [messages.fileType('file', 'json')];
        else if (!req.file) errors.file = [messages.required('file')];
        const rawSender = req.body?.sender_id;
        const senderId = rawSender === undefined || rawSender === '' ? undefined : toId(rawSender);
        if (rawSender !== undefined && rawSender !== '' && senderId === undefined) errors.sender_id = [messages.integer('sender_id')];
        throwIfAny(errors);
        return journeys.importFile(ctxOf(req), await fs.promises.readFile(req.file!.path, 'utf8'), senderId);
      });
      sendSuccess(res, { utr });
    },
  );
}
