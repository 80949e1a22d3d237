import { ctxOf } from '../http/context';
import { apiKeyInput, apiKeyRules, inviteInput, inviteRules, teamUserChange, teamUserChangeRules } from '../http/inputs/team';
import { listMessage, PAGING_PARAMS, pagingOf } from '../http/paging';
import { field, validate } from '../http/validation';
import { sendSuccess } from '../lib/envelope';
import { toId } from '../lib/http';
import type { Services } from '../services';
import { deleteById } from './crud';
import { holds, lists, ref, says } from './describe';
import type { ApiRoutes } from './routes';

/** The people of the account (extension): list, invite, change role or status, remove. */
export function mountTeamUsers(routes: ApiRoutes, { teamUsers }: Services): void {
  routes.get('/users', { summary: 'List the people of the account (extension)', response: lists('users', ref('TeamUser')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('users', await teamUsers.list(ctxOf(req), pagingOf(req))));
  });

  routes.post(
    '/users/invite',
    {
      summary: 'Invite a person by mail (extension)',
      description: 'Mails a link valid 7 days where the person chooses a password. The owner role is handed over (`/users/update`), never given by invitation.',
      response: says('Invitation Sent'),
    },
    validate(...inviteRules()),
    async (req, res) => {
      await teamUsers.invite(ctxOf(req), inviteInput(req.body));
      sendSuccess(res, 'Invitation Sent');
    },
  );

  routes.post(
    '/users/update',
    {
      summary: "Change a person's role or status (extension)",
      description: '`role: owner` hands ownership to an active admin (the owner only); the former owner becomes an admin. A disabled person is signed out and cannot sign in.',
      response: says('Updated Successfully'),
    },
    validate(field('id', 'query').required().integer(), ...teamUserChangeRules()),
    async (req, res) => {
      await teamUsers.update(ctxOf(req), toId(req.query.id) ?? 0, teamUserChange(req.body));
      sendSuccess(res, 'Updated Successfully');
    },
  );

  deleteById(routes, '/users/delete', 'id', teamUsers.remove, 'Remove a person from the account (extension)');
}

/** Key pairs with roles (extension); the account's original pair is not listed and acts as the owner. */
export function mountApiKeys(routes: ApiRoutes, { apiKeys }: Services): void {
  routes.get('/api-keys', { summary: 'List the API keys with roles (extension)', response: lists('apiKeys', ref('ApiKey')), params: PAGING_PARAMS }, async (req, res) => {
    sendSuccess(res, listMessage('apiKeys', await apiKeys.list(ctxOf(req), pagingOf(req))));
  });

  routes.post(
    '/api-keys/save',
    {
      summary: 'Make an API key with a role (extension)',
      description: 'The answer is the only time `secret_key` is shown: only its hash is stored. A key may not have a role above its maker\'s.',
      response: holds({ apiKey: ref('CreatedApiKey') }),
    },
    validate(...apiKeyRules()),
    async (req, res) => {
      sendSuccess(res, { apiKey: await apiKeys.create(ctxOf(req), apiKeyInput(req.body)) });
    },
  );

  deleteById(routes, '/api-keys/delete', 'id', apiKeys.remove, 'Delete an API key (extension)');
}
