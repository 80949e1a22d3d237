import type { Request } from 'express';
import type { Config } from '../config';
import { ctxOf } from '../http/context';
import { field, validate } from '../http/validation';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The privacy page: download everything held about an address (JSON), or erase it. */
export function mountPrivacy(routes: WebRoutes, { privacy }: Services, views: Views, _config: Config): void {
  const pageData = async (req: Request) => ({ title: 'Privacy requests', values: { email: req.body?.email ?? req.query.email ?? '' } });

  routes.get('/contacts/privacy', async (req, res) => {
    views.page(req, res, 'contacts/privacy.njk', await pageData(req));
  });

  routes.download('/contacts/privacy/export.json', onInvalid('contacts/privacy.njk', pageData), validate(field('email', 'query').required().email()), async (req, res) => {
    const email = String(req.query.email).trim();
    const data = await privacy.export(ctxOf(req), email);
    res.status(200).attachment('privacy-export.json').type('application/json; charset=utf-8').send(JSON.stringify(data, null, 2));
  });

  routes.post(
    '/contacts/privacy/erase',
    onInvalid('contacts/privacy.njk', pageData),
    validate(field('email').required().email(), field('confirm').required('Tick the box to confirm the erasure.')),
    async (req, res) => {
      const email = String(req.body.email).trim();
      const erased = await privacy.erase(ctxOf(req), email);
      views.redirect(
        res,
        '/contacts/privacy',
        `${email} was erased: ${plural(erased.contacts, 'contact', 'contacts')} and ${plural(erased.segment_recipients, 'segment entry', 'segment entries')} deleted, ` +
          `the address removed from ${plural(erased.messages, 'sent message', 'sent messages')}.`,
      );
    },
  );
}
