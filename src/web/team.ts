import type { Request, Response } from 'express';
import { ctxOf } from '../http/context';
import { inviteInput, inviteRules, INVITED_ROLES, teamUserChange, teamUserChangeRules } from '../http/inputs/team';
import { validate } from '../http/validation';
import { TEAM_ROLE_DUTIES, TEAM_ROLE_NAMES, TeamRole, TeamUserStatus } from '../lib/constants';
import { toId } from '../lib/http';
import type { Services } from '../services';
import type { TeamMember } from '../services/accounts/team-identity';
import type { TeamUserRecord } from '../services/accounts/team-users';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const STATUS_LABELS: Record<TeamUserStatus, string> = { invited: 'Invited', active: 'Active', disabled: 'Disabled' };

/** The roles a row's role can be changed to by the signed-in person: ownership only by the owner, to an active admin. */
function roleChoices(me: TeamMember, row: TeamUserRecord) {
  const roles: TeamRole[] = me.role === 'owner' && row.role === 'admin' && row.status === 'active' ? [...INVITED_ROLES, 'owner'] : [...INVITED_ROLES];
  return roles.map((role) => ({ value: role, label: role === 'owner' ? 'Owner (hand over ownership)' : TEAM_ROLE_NAMES[role] }));
}

/** The Team page: the people of the account, invitations, roles, disabling and removing. */
export function mountTeam(routes: WebRoutes, { teamUsers }: Services, views: Views): void {
  const data = async (req: Request, res: Response) => {
    const me = res.locals.member as TeamMember;
    const { rows } = await teamUsers.list(ctxOf(req));
    return {
      title: 'Team',
      people: rows.map((row) => ({
        ...row,
        roleLabel: TEAM_ROLE_NAMES[row.role],
        statusLabel: STATUS_LABELS[row.status],
        isMe: row.id === me.id,
        roleChoices: row.role === 'owner' ? [] : roleChoices(me, row),
      })),
      inviteRoles: INVITED_ROLES.map((role) => ({ value: role, label: `${TEAM_ROLE_NAMES[role]}: ${TEAM_ROLE_DUTIES[role]}` })),
      values: { role: 'editor' },
    };
  };
  const back = (res: Response, flash: string) => views.redirect(res, '/team', flash);
  const id = (req: Request) => toId(req.params.id) ?? 0;

  routes.get('/team', async (req, res) => views.page(req, res, 'team/index.njk', await data(req, res)));

  routes.post('/team', onInvalid('team/index.njk', (req, res) => data(req, res)), validate(...inviteRules()), async (req, res) => {
    const input = inviteInput(req.body);
    await teamUsers.invite(ctxOf(req), input);
    back(res, `Invitation sent to ${input.email}. The link works for 7 days.`);
  });

  routes.post('/team/:id/role', validate(...teamUserChangeRules()), async (req, res) => {
    const change = teamUserChange(req.body);
    await teamUsers.update(ctxOf(req), id(req), { role: change.role });
    back(res, change.role === 'owner' ? 'Ownership handed over. You are an admin now.' : 'Role changed.');
  });

  routes.post('/team/:id/status', validate(...teamUserChangeRules()), async (req, res) => {
    const change = teamUserChange(req.body);
    await teamUsers.update(ctxOf(req), id(req), { status: change.status });
    back(res, change.status === 'disabled' ? 'Disabled: they are signed out and cannot sign in.' : 'Enabled: they can sign in again.');
  });

  routes.post('/team/:id/resend', async (req, res) => {
    await teamUsers.resendInvitation(ctxOf(req), id(req));
    back(res, 'A new invitation is on its way; the earlier link no longer works.');
  });

  routes.post('/team/:id/delete', async (req, res) => {
    await teamUsers.remove(ctxOf(req), [id(req)]);
    back(res, 'Removed from the team.');
  });
}
