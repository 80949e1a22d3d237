import { sendSuccess } from '../lib/envelope';
import { bulkIds, toId } from '../lib/http';
import { field, validate } from '../http/validation';
import type { Ctx } from '../services/context';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';

/**
 * The two delete endpoints that many resources share: one record by a query id, and a
 * bulk delete of `strIds`. Both answer 'Deleted Successfully' and 404 when nothing matched.
 */
type Remove = (ctx: Ctx, ids: number[]) => Promise<unknown>;

export function deleteById(routes: ApiRoutes, path: string, param: string, remove: Remove): void {
  routes.delete(path, validate(field(param, 'query').required().integer()), async (req, res) => {
    await remove(ctxOf(req), [toId(req.query[param]) ?? 0]);
    sendSuccess(res, 'Deleted Successfully');
  });
}

export function bulkDelete(routes: ApiRoutes, path: string, remove: Remove): void {
  routes.post(path, async (req, res) => {
    await remove(ctxOf(req), bulkIds(req.body?.strIds));
    sendSuccess(res, 'Deleted Successfully');
  });
}
