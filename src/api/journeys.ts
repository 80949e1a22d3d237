import { sendSuccess } from '../lib/envelope';
import { validate, field } from '../http/validation';
import type { Services } from '../services';
import { utrField, utrOf } from '../http/campaign-params';
import { holds } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';

const graphSchema = { type: 'object', description: '`{"start": "<node id>", "nodes": {"<id>": {...}}}` (docs/journeys.md)' } as const;

/** An optional `version` (a whole number from 1). */
const versionOf = (value: unknown): number | undefined => (value === undefined || value === '' ? undefined : Number(value));

/** Extension: an automation's journey, a graph of nodes drawn from its steps (docs/journeys.md). */
export function mountJourneys(routes: ApiRoutes, { journeys }: Services): void {
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
}
