import type { Services } from '../services';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { field, validate } from '../http/validation';
import { sendSuccess } from '../lib/envelope';

/** Extensions (issue 11, point 10): everything held about an address, and its erasure. */
export function mountPrivacy(routes: ApiRoutes, { privacy }: Services): void {
  routes.get('/contacts/privacy-export', validate(field('email', 'query').required().email()), async (req, res) => {
    sendSuccess(res, { privacy: await privacy.export(ctxOf(req), String(req.query.email).trim()) });
  });

  routes.post('/contacts/erase', validate(field('email').required().email()), async (req, res) => {
    const erased = await privacy.erase(ctxOf(req), String(req.body.email).trim());
    res.status(200).json({ status: 'success', message: 'Erased Successfully', erased });
  });
}
