import type { Request, Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { Config } from '../config';
import { emailKey } from '../lib/email-key';
import { SESSION } from '../lib/constants';
import { ValidationError } from '../lib/errors';
import { plainErrors } from './plain-messages';
import type { Services } from '../services';
import type { Cookies } from './cookies';
import { verifyCsrf } from './csrf';
import { publicFormToken, SESSION_COOKIE, SIGN_IN_COOKIE, sessionOrigin } from './auth';
import type { WebRoutes } from './routes';
import type { Views } from './views';

const LINK_GONE = 'This link does not work any more: it was used, it expired, or a newer one was sent. Ask for a new one.';
/** The same answer whether or not the address signs in here. */
const RESET_SENT = 'If this address signs in here, a link to choose a new password is on its way. It works for an hour.';

/**
 * The pages reached from mail, before sign-in: accepting an invitation (choose a password, then
 * land in the dashboard signed in), asking for a password-reset link, and using it.
 */
export function mountTeamAccess(routes: WebRoutes, { teamUsers, sessions }: Services, views: Views, cookies: Cookies, config: Config): void {
  const csrf = verifyCsrf((req) => cookies.read(req, SIGN_IN_COOKIE));
  const token = (req: Request) => String(req.params.token ?? '');

  const gone = (req: Request, res: Response) =>
    views.page(req, res, 'team/link-gone.njk', { title: 'Link expired', message: LINK_GONE }, { status: 410 });

  const invitationPage = async (req: Request, res: Response, status = 200, errors?: Record<string, string[]>) => {
    const invitation = await teamUsers.invitation(token(req));
    if (!invitation) return gone(req, res);
    views.page(
      req,
      res,
      'team/accept.njk',
      {
        title: 'Join the team',
        csrfToken: publicFormToken(req, res, cookies),
        action: `/invitation/${encodeURIComponent(token(req))}`,
        invitation: { email: invitation.member.email, accountName: invitation.accountName, role: invitation.member.role },
        values: { name: typeof req.body?.name === 'string' ? req.body.name : invitation.member.name },
        errors,
      },
      { status },
    );
  };

  routes.publicGet('/invitation/:token', (req, res) => invitationPage(req, res));

  routes.publicPost('/invitation/:token', csrf, async (req, res) => {
    let member;
    try {
      member = await teamUsers.acceptInvitation(token(req), req.body ?? {});
    } catch (err) {
      if (err instanceof ValidationError) return invitationPage(req, res, 422, plainErrors(err.fields));
      throw err;
    }
    if (!member) return gone(req, res);
    const session = await sessions.create(member, sessionOrigin(req));
    cookies.set(res, SESSION_COOKIE, session.token, { maxAgeMs: SESSION.ttlMs });
    cookies.clear(res, SIGN_IN_COOKIE);
    views.redirect(res, '/', `Welcome, ${member.name}. You are signed in.`);
  });

  // Every request counts here (a reset mails someone): per client, and per address and client.
  const client = (req: Request) => ipKeyGenerator(req.ip ?? '');
  const resetLimit = config.loginRateLimit > 0
    ? [
        rateLimit({
          windowMs: 15 * 60_000,
          limit: config.loginRateLimit,
          standardHeaders: 'draft-7',
          legacyHeaders: false,
          keyGenerator: (req) => `reset:${emailKey(String(req.body?.email ?? ''))}|${client(req)}`,
          handler: (req, res) => forgotPage(req, res, 429, 'Too many requests. Wait a few minutes and try again.'),
          validate: false,
        }),
      ]
    : [];

  const forgotPage = (req: Request, res: Response, status = 200, error?: string, sent?: string) =>
    views.page(req, res, 'team/forgot.njk', { title: 'Forgot your password', csrfToken: publicFormToken(req, res, cookies), error, sent, values: { email: '' } }, { status });

  routes.publicGet('/forgot-password', (req, res) => forgotPage(req, res));

  routes.publicPost('/forgot-password', csrf, ...resetLimit, async (req, res) => {
    const email = typeof req.body?.email === 'string' ? req.body.email.trim() : '';
    if (!email) return forgotPage(req, res, 422, 'Enter the address you sign in with.');
    await teamUsers.requestReset(email);
    forgotPage(req, res, 200, undefined, RESET_SENT);
  });

  const resetPage = async (req: Request, res: Response, status = 200, errors?: Record<string, string[]>) => {
    if (!(await teamUsers.resetWorks(token(req)))) return gone(req, res);
    views.page(
      req,
      res,
      'team/reset.njk',
      { title: 'Choose a new password', csrfToken: publicFormToken(req, res, cookies), action: `/reset-password/${encodeURIComponent(token(req))}`, errors },
      { status },
    );
  };

  routes.publicGet('/reset-password/:token', (req, res) => resetPage(req, res));

  routes.publicPost('/reset-password/:token', csrf, async (req, res) => {
    let member;
    try {
      member = await teamUsers.resetPassword(token(req), req.body ?? {});
    } catch (err) {
      if (err instanceof ValidationError) return resetPage(req, res, 422, plainErrors(err.fields));
      throw err;
    }
    if (!member) return gone(req, res);
    views.redirect(res, '/login', 'Your password is changed and every browser was signed out. Sign in with the new password.');
  });
}
