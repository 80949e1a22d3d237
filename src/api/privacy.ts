import type { Services } from '../services';
import { holds, ref, saysWith } from './describe';
import { ApiRoutes } from './routes';
import { ctxOf } from '../http/context';
import { field, validate } from '../http/validation';
import { sendSuccess } from '../lib/envelope';

/** Extensions (privacy requests): everything held about an address, and its erasure. */
export function mountPrivacy(routes: ApiRoutes, { privacy }: Services): void {
  routes.get('/contacts/privacy-export', { effect: 'exports', summary: 'Everything held about an address (extension)', response: holds({ privacy: ref('PrivacyExport') }) }, validate(field('email', 'query').required().email()), async (req, res) => {
    sendSuccess(res, { privacy: await privacy.export(ctxOf(req), String(req.query.email).trim()) });
  });

  routes.post('/contacts/erase', { summary: 'Erase an address (extension)', response: saysWith('Erased Successfully', { erased: ref('ErasureCount') }) }, validate(field('email').required().email()), async (req, res) => {
    const erased = await privacy.erase(ctxOf(req), String(req.body.email).trim());
    res.status(200).json({ status: 'success', message: 'Erased Successfully', erased });
  });
}
