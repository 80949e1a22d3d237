import fs from 'node:fs/promises';
import path from 'node:path';
import type { Request } from 'express';
import type { Config } from '../config';
import { ctxOf } from '../http/context';
import type { Services } from '../services';
import { onInvalid } from './errors';
import { healthAnswer, ProbeAnswer, readinessAnswer } from './operations';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/** The operations guide, served as it is written (the repository's docs/operations.md). */
const OPERATIONS_GUIDE = path.join(__dirname, '..', '..', 'docs', 'operations.md');

/** A probe's answer as the page shows it: the same status and JSON as the endpoint. */
const shownProbe = (answer: ProbeAnswer) => ({ ...answer, ok: answer.status === 200, json: JSON.stringify(answer.body) });

/** The heartbeat's age in words. */
function workerWords(age: unknown): string {
  if (typeof age !== 'number') return 'No sending worker has been seen: nothing is being sent until one runs.';
  if (age <= 60) return `A sending worker was last seen ${Math.round(age)} seconds ago.`;
  return `No sending worker has been seen for ${Math.round(age / 60)} minutes: check that one is running.`;
}

/**
 * The Maintenance page: clean-ups of the account's own data, each in two steps. The first
 * (a GET, nothing changes) counts what would be deleted; the second (a POST with the same
 * value) deletes it. What the worker deletes by itself is on the settings page. Beside them,
 * for the operator: the service's health (what `/healthz` and `/readyz` answer now) and where
 * backup, restore and metrics are explained.
 */
export function mountMaintenance(routes: WebRoutes, services: Services, views: Views, config: Config): void {
  const { cleanup } = services;
  const pageData = async (req: Request, extra: Record<string, unknown> = {}) => {
    const [health, ready] = await Promise.all([healthAnswer(services), readinessAnswer(services)]);
    return {
      title: 'Maintenance',
      values: { days: text(req.query.days) || '365', before: text(req.query.before), ...req.body },
      health: shownProbe(health),
      ready: shownProbe(ready),
      workerWords: workerWords(ready.body.worker_heartbeat_age_seconds ?? health.body.worker_heartbeat_age_seconds),
      metricsProtected: Boolean(config.metricsToken),
      ...extra,
    };
  };

  routes.get('/maintenance/operations.md', async (_req, res) => {
    res.status(200).type('text/plain; charset=utf-8').send(await fs.readFile(OPERATIONS_GUIDE, 'utf8'));
  });

  routes.get('/maintenance', async (req, res) => {
    views.page(req, res, 'maintenance/index.njk', await pageData(req));
  });

  routes.get('/maintenance/contacts', onInvalid('maintenance/index.njk', (req) => pageData(req)), async (req, res) => {
    const days = text(req.query.days);
    const { count } = await cleanup.countLapsedContacts(ctxOf(req), days);
    views.page(req, res, 'maintenance/index.njk', await pageData(req, { contactsCheck: { days, count } }));
  });

  routes.post('/maintenance/contacts', onInvalid('maintenance/index.njk', (req) => pageData(req)), async (req, res) => {
    const { count } = await cleanup.deleteLapsedContacts(ctxOf(req), text(req.body.days));
    views.redirect(res, '/maintenance', count ? `${plural(count, 'contact', 'contacts')} deleted.` : 'No contact matched any more: nothing was deleted.');
  });

  routes.get('/maintenance/engagement', onInvalid('maintenance/index.njk', (req) => pageData(req)), async (req, res) => {
    const before = text(req.query.before);
    const { count } = await cleanup.countEngagement(ctxOf(req), before);
    views.page(req, res, 'maintenance/index.njk', await pageData(req, { engagementCheck: { before, count } }));
  });

  routes.post('/maintenance/engagement', onInvalid('maintenance/index.njk', (req) => pageData(req)), async (req, res) => {
    const { count } = await cleanup.deleteEngagement(ctxOf(req), text(req.body.before));
    views.redirect(res, '/maintenance', count ? `The opens and clicks of ${plural(count, 'message', 'messages')} were deleted.` : 'No opens or clicks matched any more: nothing was deleted.');
  });
}
