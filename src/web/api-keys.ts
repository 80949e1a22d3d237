import type { Request } from 'express';
import { ctxOf } from '../http/context';
import { apiKeyInput, apiKeyRules } from '../http/inputs/team';
import { validate } from '../http/validation';
import { TEAM_ROLE_NAMES, TEAM_ROLES } from '../lib/constants';
import { toId } from '../lib/http';
import type { Services } from '../services';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const SECRET = { 'secret-key': 'api-keys/macros.njk#secretKey' } as const;

/**
 * The account's original key pair (it acts as the owner; a new secret is shown once, only its
 * hash is stored), and key pairs with roles, made and deleted here.
 */
export function mountApiKeys(routes: WebRoutes, { accounts, apiKeys }: Services, views: Views): void {
  const data = async (req: Request) => ({
    title: 'API keys',
    keys: (await apiKeys.list(ctxOf(req))).rows.map((key) => ({ ...key, roleLabel: TEAM_ROLE_NAMES[key.role] })),
    // Only roles up to the maker's own: a key never outranks who made it.
    roles: TEAM_ROLES.slice(TEAM_ROLES.indexOf(req.actor?.role ?? 'analyst')).map((role) => ({ value: role, label: TEAM_ROLE_NAMES[role] })),
    values: { role: 'analyst' },
  });

  routes.get('/api-keys', async (req, res) => {
    views.page(req, res, 'api-keys/index.njk', await data(req));
  });

  routes.post('/api-keys/rotate', async (req, res) => {
    const newSecret = await accounts.rotateSecret(ctxOf(req));
    views.page(req, res, 'api-keys/index.njk', { ...(await data(req)), newSecret }, { fragments: SECRET });
  });

  // A reload after rotating lands here: the secret is not shown twice.
  routes.get('/api-keys/rotate', (_req, res) => res.redirect(303, '/api-keys'));

  routes.post('/api-keys', onInvalid('api-keys/index.njk', data), validate(...apiKeyRules()), async (req, res) => {
    const created = await apiKeys.create(ctxOf(req), apiKeyInput(req.body));
    views.page(req, res, 'api-keys/index.njk', { ...(await data(req)), created: { ...created, roleLabel: TEAM_ROLE_NAMES[created.role] } });
  });

  routes.post('/api-keys/:id/delete', async (req, res) => {
    await apiKeys.remove(ctxOf(req), [toId(req.params.id) ?? 0]);
    views.redirect(res, '/api-keys', 'Key deleted: it no longer opens the API.');
  });
}
