import type { Request, Response } from 'express';
import { SESSION, TEAM_ROLE_NAMES } from '../lib/constants';
import type { Services } from '../services';
import type { TeamMember } from '../services/accounts/team-identity';
import { SESSION_COOKIE, sessionOrigin } from './auth';
import type { Cookies } from './cookies';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** A browser's name from its User-Agent, in plain words (the full string stays in the title). */
function browserOf(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser';
  const name = /Edg\//.test(userAgent) ? 'Edge' : /Firefox\//.test(userAgent) ? 'Firefox' : /Chrome\//.test(userAgent) ? 'Chrome' : /Safari\//.test(userAgent) ? 'Safari' : 'A browser or program';
  const system = /Android/.test(userAgent) ? 'Android' : /iPhone|iPad/.test(userAgent) ? 'iOS' : /Windows/.test(userAgent) ? 'Windows' : /Mac OS X/.test(userAgent) ? 'macOS' : /Linux/.test(userAgent) ? 'Linux' : '';
  return system ? `${name} on ${system}` : name;
}

/**
 * Your profile: who you are in this account, your password, your two-step sign-in (every role
 * has one, so it is here and not under Settings), and the browsers signed in as you, each of
 * which you can sign out (or all at once).
 */
export function mountProfile(routes: WebRoutes, { teamUsers, sessions, twoFactor }: Services, views: Views, cookies: Cookies): void {
  const data = async (req: Request, res: Response) => {
    const me = res.locals.member as TeamMember;
    const [list, twoStep] = await Promise.all([sessions.list(me.id, cookies.read(req, SESSION_COOKIE) ?? ''), twoFactor.status(me.id)]);
    return {
      title: 'Your profile',
      me: { ...me, roleLabel: TEAM_ROLE_NAMES[me.role] },
      twoStep,
      sessions: list.map((s) => ({ ...s, browser: browserOf(s.user_agent) })),
    };
  };

  routes.get('/profile', async (req, res) => views.page(req, res, 'profile/index.njk', await data(req, res)));

  // A new password signs every other browser out: the sessions are replaced by a new one here.
  routes.post('/profile/password', onInvalid('profile/index.njk', (req, res) => data(req, res)), async (req, res) => {
    const me = res.locals.member as TeamMember;
    await teamUsers.changePassword(me.id, req.body);
    await sessions.destroyAllOf(me.id);
    const session = await sessions.create(me, sessionOrigin(req));
    cookies.set(res, SESSION_COOKIE, session.token, { maxAgeMs: SESSION.ttlMs });
    views.redirect(res, '/profile', 'Password changed. Other browsers were signed out.');
  });

  routes.post('/profile/sessions/:id/end', async (req, res) => {
    const me = res.locals.member as TeamMember;
    const ended = await sessions.end(me.id, String(req.params.id));
    views.redirect(res, '/profile', ended ? 'That browser is signed out.' : 'That session had already ended.');
  });

  routes.post('/profile/sign-out-everywhere', async (req, res) => {
    const me = res.locals.member as TeamMember;
    await sessions.destroyAllOf(me.id);
    cookies.clear(res, SESSION_COOKIE);
    views.redirect(res, '/login', 'You are signed out everywhere, this browser included.');
  });
}
