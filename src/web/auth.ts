import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { ctxOf } from '../http/context';
import type { Config } from '../config';
import { emailKey } from '../lib/email-key';
import { SESSION } from '../lib/constants';
import { randomToken } from '../lib/crypto';
import type { Services } from '../services';
import type { SessionOrigin, SessionsService } from '../services/accounts/sessions';
import { TeamMember, userActor } from '../services/accounts/team-identity';
import type { Cookies } from './cookies';
import { verifyCsrf } from './csrf';
import { onInvalid } from './errors';
import { settingsForm } from './settings';
import { mountSecondStep, TWO_FACTOR_OPEN_PATHS, TWO_FACTOR_SETUP } from './two-factor';
import { mountSingleSignOn } from './single-sign-on';
import type { WebRoutes } from './routes';
import type { Views } from './views';

export const SESSION_COOKIE = 'cc_session';
/** Before sign-in there is no session: the sign-in form's token is a double-submit cookie. */
export const SIGN_IN_COOKIE = 'cc_signin';

/** The double-submit token of a form shown before sign-in (sign-in, invitation, password reset). */
export function publicFormToken(req: Request, res: Response, cookies: Cookies): string {
  let token = cookies.read(req, SIGN_IN_COOKIE);
  if (!token) {
    token = randomToken(24);
    cookies.set(res, SIGN_IN_COOKIE, token, { sameSite: 'strict' });
  }
  return token;
}

/** One sentence for every failure, so no answer tells whether an address has an account. */
export const SIGN_IN_FAILED = 'The email or password is incorrect.';
export const SIGN_IN_LIMITED = 'Too many sign-in attempts. Wait a few minutes and try again.';
const LIMIT_WINDOW_MS = 15 * 60_000;

/** Resolves the session cookie; without a live session, the visitor goes to the sign-in page. */
export function requireSession(sessions: SessionsService, cookies: Cookies): RequestHandler {
  return async (req, res, next) => {
    const session = await sessions.resolve(cookies.read(req, SESSION_COOKIE) ?? '');
    if (!session) {
      const back = req.method === 'GET' && req.originalUrl !== '/' ? `?next=${encodeURIComponent(req.originalUrl)}` : '';
      if (req.get('HX-Request') === 'true') {
        // A swap cannot show the sign-in page: htmx loads it as a whole page instead.
        res.set('HX-Redirect', `/login${back}`);
        res.status(401).end();
        return;
      }
      res.redirect(303, `/login${back}`);
      return;
    }
    if (session.renewed) cookies.set(res, SESSION_COOKIE, cookies.read(req, SESSION_COOKIE) ?? '', { maxAgeMs: SESSION.ttlMs });
    if (session.mustEnrolTwoFactor && !TWO_FACTOR_OPEN_PATHS.has(req.path)) {
      // The account requires two-step sign-in: until this person turns it on, only that page opens.
      if (req.get('HX-Request') === 'true') {
        res.set('HX-Redirect', TWO_FACTOR_SETUP);
        res.status(403).end();
        return;
      }
      res.redirect(303, TWO_FACTOR_SETUP);
      return;
    }
    req.account = session.account;
    req.actor = session.actor;
    res.locals.account = session.account;
    res.locals.member = session.member;
    res.locals.csrfToken = session.csrfToken;
    next();
  };
}

/** Where a session is opened from, for the person's list of their sessions. */
export function sessionOrigin(req: Request): SessionOrigin {
  return { ip: req.ip, userAgent: req.get('User-Agent') };
}

/** Only a path of this site, never `//elsewhere` or a scheme. */
function localPath(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])/.test(value) ? value : '/';
}

export function mountAuth(routes: WebRoutes, { teamUsers, sessions, retention, archive, auditLog, twoFactor, singleSignOn }: Services, views: Views, cookies: Cookies, config: Config): void {
  const signInPage = (req: Request, res: Response, status = 200, error?: string) => {
    const token = publicFormToken(req, res, cookies);
    views.page(req, res, 'sign-in.njk', {
      title: 'Sign in',
      csrfToken: token,
      next: localPath(req.query.next ?? req.body?.next),
      values: { email: typeof req.body?.email === 'string' ? req.body.email : '' },
      error,
      sso: singleSignOn.enabled,
    }, { status });
  };

  // Only failures count, and per client (its address, as TRUST_PROXY lets Express read it): failures
  // from elsewhere never lock a user out, and a right password passes unless this client is itself
  // over a limit: its failures for this email, or all its failures (4×, a client trying many emails).
  const limiter = (limit: number, key: (req: Request) => string) =>
    rateLimit({
      windowMs: LIMIT_WINDOW_MS,
      limit,
      skipSuccessfulRequests: true,
      standardHeaders: 'draft-7',
      legacyHeaders: false,
      keyGenerator: key,
      handler: (req, res) => signInPage(req, res, 429, SIGN_IN_LIMITED),
      validate: false,
    });
  const client = (req: Request) => ipKeyGenerator(req.ip ?? '');
  const limits: RequestHandler[] = config.loginRateLimit > 0
    ? [
        limiter(config.loginRateLimit * 4, (req) => `client:${client(req)}`),
        limiter(config.loginRateLimit, (req) => `email:${emailKey(String(req.body?.email ?? ''))}|client:${client(req)}`),
      ]
    : [];

  routes.publicGet('/login', async (req, res) => {
    if (await sessions.resolve(cookies.read(req, SESSION_COOKIE) ?? '')) return res.redirect(303, localPath(req.query.next));
    signInPage(req, res);
  });

  routes.publicPost(
    '/login',
    verifyCsrf((req) => cookies.read(req, SIGN_IN_COOKIE)),
    ...limits,
    async (req, res) => {
      const { email, password } = req.body as Record<string, unknown>;
      const member = typeof email === 'string' && typeof password === 'string' && email.trim() && password
        ? await teamUsers.signIn(email, password)
        : undefined;
      if (!member) {
        if (typeof email === 'string' && email.trim()) await auditLog.signInFailed(email, req.ip);
        return signInPage(req, res, 401, SIGN_IN_FAILED);
      }
      // With two-step sign-in on, the password alone opens no session: the code step follows.
      if (await twoFactor.enabledFor(member.id)) return secondStep.start(req, res, member, localPath(req.body.next));
      await finishSignIn(req, res, member, localPath(req.body.next));
    },
  );

  /** Opens the person's session (after the password, or the password and a code) and lands them on `next`. */
  async function finishSignIn(req: Request, res: Response, member: TeamMember, next: string, summary?: string): Promise<void> {
    await sessions.destroy(cookies.read(req, SESSION_COOKIE) ?? '');
    const session = await sessions.create(member, sessionOrigin(req));
    await auditLog.record({ userId: member.user_id, actor: userActor(member), ip: req.ip ?? null }, { action: 'user.signed_in', recordType: 'user', recordId: member.id, summary });
    cookies.set(res, SESSION_COOKIE, session.token, { maxAgeMs: SESSION.ttlMs });
    cookies.clear(res, SIGN_IN_COOKIE);
    // An account that requires two-step sign-in sends a person without it to turn it on first.
    const enrol = !(await twoFactor.enabledFor(member.id)) && (await twoFactor.required(member.user_id));
    res.redirect(303, enrol ? TWO_FACTOR_SETUP : next);
  }
  mountSingleSignOn(routes, { singleSignOn }, cookies, { signInPage, finishSignIn });
  const secondStep = mountSecondStep(routes, { twoFactor, teamUsers, auditLog }, views, cookies, { limits, signInPage, finishSignIn, signInCookie: SIGN_IN_COOKIE });

  // A new password signs every other browser out: the sessions are replaced by a new one here.
  routes.post('/settings/password', onInvalid('settings.njk', async (req) => settingsForm(req.account, retention.policy(), await archive.address(ctxOf(req)))), async (req, res) => {
    const member = res.locals.member as TeamMember;
    await teamUsers.changePassword(member.id, req.body);
    await auditLog.record(ctxOf(req), { action: 'user.password_changed', recordType: 'user', recordId: member.id, summary: 'Other browsers were signed out' });
    await sessions.destroyAllOf(member.id);
    const session = await sessions.create(member, sessionOrigin(req));
    cookies.set(res, SESSION_COOKIE, session.token, { maxAgeMs: SESSION.ttlMs });
    views.redirect(res, '/settings', 'Password changed. Other browsers were signed out.');
  });

  routes.post('/logout', async (req, res) => {
    await auditLog.record(ctxOf(req), { action: 'user.signed_out' });
    await sessions.destroy(cookies.read(req, SESSION_COOKIE) ?? '');
    cookies.clear(res, SESSION_COOKIE);
    res.redirect(303, '/login');
  });
}
