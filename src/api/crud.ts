import { sendSuccess } from '../lib/envelope';
import { bulkIds, toId } from '../lib/http';
import { LIMITS } from '../lib/constants';
import { param } from '../http/param-doc';
import { field, validate } from '../http/validation';
import type { Ctx } from '../services/context';
import { says } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';

/**
 * The two delete endpoints that many resources share: one record by a query id, and a
 * bulk delete of `strIds`. Both answer 'Deleted Successfully' and 404 when nothing matched.
 */
type Remove = (ctx: Ctx, ids: number[]) => Promise<unknown>;

/** `strIds` as bulkIds reads it. */
const STR_IDS = param(
  'strIds',
  'body',
  { type: 'array', items: { type: 'integer' }, minItems: 1, maxItems: LIMITS.bulkIds },
  'Ids as `strIds[0]`, `strIds[1]`, … (or a JSON array); ids of other accounts are ignored, none matching is a 404.',
  true,
);

export function deleteById(routes: ApiRoutes, path: string, param: string, remove: Remove, summary: string): void {
  routes.delete(path, { summary, response: says('Deleted Successfully') }, validate(field(param, 'query').required().integer()), async (req, res) => {
    await remove(ctxOf(req), [toId(req.query[param]) ?? 0]);
    sendSuccess(res, 'Deleted Successfully');
  });
}

export function bulkDelete(routes: ApiRoutes, path: string, remove: Remove, summary: string): void {
  routes.post(path, { summary, response: says('Deleted Successfully'), params: [STR_IDS] }, async (req, res) => {
    await remove(ctxOf(req), bulkIds(req.body?.strIds));
    sendSuccess(res, 'Deleted Successfully');
  });
}
