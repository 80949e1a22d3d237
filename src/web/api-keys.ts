import { ctxOf } from '../http/context';
import type { Services } from '../services';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const SECRET = { 'secret-key': 'api-keys/macros.njk#secretKey' } as const;

/** The public key, and a new secret key shown once: only its hash is stored. */
export function mountApiKeys(routes: WebRoutes, { accounts, auditLog }: Services, views: Views): void {
  routes.get('/api-keys', (req, res) => {
    views.page(req, res, 'api-keys/index.njk', { title: 'API keys' });
  });

  routes.post('/api-keys/rotate', async (req, res) => {
    const newSecret = await accounts.rotateSecret(ctxOf(req).userId);
    await auditLog.record(ctxOf(req), { action: 'api_key.created', recordType: 'api_key', summary: 'New secret key for the account\'s original key pair' });
    views.page(req, res, 'api-keys/index.njk', { title: 'API keys', newSecret }, { fragments: SECRET });
  });

  // A reload after rotating lands here: the secret is not shown twice.
  routes.get('/api-keys/rotate', (_req, res) => res.redirect(303, '/api-keys'));
}
