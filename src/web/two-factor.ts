import type { Request, RequestHandler, Response } from 'express';
import { ctxOf } from '../http/context';
import { TWO_FACTOR } from '../lib/constants';
import { randomToken } from '../lib/crypto';
import { ConflictError } from '../lib/errors';
import type { Services } from '../services';
import type { TeamMember } from '../services/accounts/team-identity';
import type { Cookies } from './cookies';
import { verifyCsrf } from './csrf';
import { onInvalid } from './errors';
import type { WebRoutes } from './routes';
import type { Views } from './views';

/** The page where a person turns two-step sign-in on (and where an account that requires it sends them). */
export const TWO_FACTOR_SETUP = '/two-factor';
/** What a person who must turn it on may still open. */
export const TWO_FACTOR_OPEN_PATHS: ReadonlySet<string> = new Set(['/two-factor', '/two-factor/begin', '/two-factor/confirm', '/logout']);

/** Between the password and the code: which person, until when (signed by the service). */
const PENDING_COOKIE = 'cc_2fa';
export const CODE_FAILED = 'The code is not right, or it was used already.';

interface SignInParts {
  /** The sign-in limiters: a wrong code counts as a failed sign-in of the person's address. */
  limits: RequestHandler[];
  signInPage: (req: Request, res: Response, status?: number, error?: string) => void;
  finishSignIn: (req: Request, res: Response, member: TeamMember, next: string, summary?: string) => Promise<void>;
  signInCookie: string;
}

type Deps = Pick<Services, 'twoFactor' | 'teamUsers' | 'auditLog'>;

/** Only a path of this site, never `//elsewhere` or a scheme. */
function localPath(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])/.test(value) ? value : '/';
}

/**
 * The second step of sign-in: after a right password, a person with two-step sign-in gets no
 * session but a short-lived signed cookie naming them, and the code page; a code of their app
 * or one of their recovery codes then opens the session. Wrong codes go through the same
 * limiters as wrong passwords (keyed by the person's address), so guessing codes is as slow.
 */
export function mountSecondStep(routes: WebRoutes, { twoFactor, teamUsers, auditLog }: Deps, views: Views, cookies: Cookies, parts: SignInParts) {
  const codePage = (req: Request, res: Response, status = 200, error?: string) => {
    let token = cookies.read(req, parts.signInCookie);
    if (!token) {
      token = randomToken(24);
      cookies.set(res, parts.signInCookie, token, { sameSite: 'strict' });
    }
    views.page(req, res, 'two-factor/code.njk', { title: 'Two-step sign-in', csrfToken: token, next: localPath(req.query.next ?? req.body?.next), error }, { status });
  };

  const pendingMember = async (req: Request): Promise<TeamMember | undefined> => {
    const id = twoFactor.pendingMember(cookies.read(req, PENDING_COOKIE));
    const member = id === undefined ? undefined : await teamUsers.member(id);
    return member?.status === 'active' ? member : undefined;
  };

  routes.publicGet('/login/code', async (req, res) => {
    if (!(await pendingMember(req))) return res.redirect(303, '/login');
    codePage(req, res);
  });

  routes.publicPost(
    '/login/code',
    verifyCsrf((req) => cookies.read(req, parts.signInCookie)),
    async (req, res, next) => {
      const member = await pendingMember(req);
      if (!member) return parts.signInPage(req, res, 401, 'The sign-in took too long. Enter your email and password again.');
      res.locals.pendingMember = member;
      // The limiters key failures by address: the code step counts against the person's.
      req.body.email = member.email;
      next();
    },
    ...parts.limits,
    async (req, res) => {
      const member = res.locals.pendingMember as TeamMember;
      const passed = await twoFactor.verify(member.id, req.body?.code);
      if (!passed) {
        await auditLog.signInFailed(member.email, req.ip, 'Wrong two-step code');
        return codePage(req, res, 401, CODE_FAILED);
      }
      cookies.clear(res, PENDING_COOKIE);
      await parts.finishSignIn(req, res, member, localPath(req.body.next), passed === 'recovery_code' ? 'With a recovery code' : 'With a two-step code');
    },
  );

  return {
    /** After a right password: remember the person for a few minutes and ask for the code. */
    start(_req: Request, res: Response, member: TeamMember, next: string): void {
      cookies.set(res, PENDING_COOKIE, twoFactor.pendingToken(member.id), { maxAgeMs: TWO_FACTOR.pendingMs, sameSite: 'strict' });
      res.redirect(303, `/login/code${next === '/' ? '' : `?next=${encodeURIComponent(next)}`}`);
    },
  };
}

/** The new recovery codes, once, with the same codes as a text file to keep (a `data:` link: nothing is stored to serve it later). */
function recoveryCodesPage(codes: string[], first: boolean, res: Response) {
  const text = [`Recovery codes for ${(res.locals.member as TeamMember).email}`, 'Each signs you in once when you do not have your phone.', '', ...codes, ''].join('\n');
  return { title: 'Your recovery codes', codes, first, download: `data:text/plain;charset=utf-8,${encodeURIComponent(text)}` };
}

/**
 * The person's own two-step sign-in: turn it on with a QR code, see how many recovery codes are
 * left, renew them, turn it off. `sessionToken` reads the browser's session cookie: turning it on
 * keeps that session and ends the others.
 */
export function mountTwoFactor(routes: WebRoutes, { twoFactor }: Services, views: Views, sessionToken: (req: Request) => string): void {
  const member = (res: Response) => res.locals.member as TeamMember;

  const pageData = async (_req: Request, res: Response) => {
    const who = member(res);
    const [status, required, setup] = await Promise.all([twoFactor.status(who.id), twoFactor.required(who.user_id), twoFactor.pending(who.id, who.email)]);
    return { title: 'Two-step sign-in', status, required, setup };
  };

  routes.get(TWO_FACTOR_SETUP, async (req, res) => {
    views.page(req, res, 'two-factor/index.njk', await pageData(req, res));
  });

  routes.post('/two-factor/begin', async (req, res) => {
    await twoFactor.begin(member(res).id, member(res).email, ctxOf(req));
    views.redirect(res, TWO_FACTOR_SETUP, 'Scan the new code with your app, then enter the code it shows.');
  });

  routes.post('/two-factor/confirm', onInvalid('two-factor/index.njk', async (req) => pageData(req, req.res!)), async (req, res) => {
    const codes = await twoFactor.confirm(ctxOf(req), member(res).id, req.body?.code, sessionToken(req));
    views.page(req, res, 'two-factor/recovery-codes.njk', recoveryCodesPage(codes, true, res));
  });

  routes.post('/two-factor/recovery-codes', onInvalid('two-factor/index.njk', async (req) => pageData(req, req.res!)), async (req, res) => {
    const codes = await twoFactor.renewRecoveryCodes(member(res).id, req.body?.code);
    views.page(req, res, 'two-factor/recovery-codes.njk', recoveryCodesPage(codes, false, res));
  });

  routes.post('/two-factor/disable', onInvalid('two-factor/index.njk', async (req) => pageData(req, req.res!)), async (req, res) => {
    if (await twoFactor.required(member(res).user_id)) throw new ConflictError('This account requires two-step sign-in: it cannot be turned off.');
    await twoFactor.disable(ctxOf(req), member(res).id, req.body?.code);
    views.redirect(res, TWO_FACTOR_SETUP, 'Two-step sign-in is off.');
  });

  routes.post('/settings/two-factor', async (req, res) => {
    await twoFactor.setRequired(ctxOf(req), req.body?.two_factor_required === '1');
    views.redirect(res, '/settings', req.body?.two_factor_required === '1' ? 'Two-step sign-in is now required for everyone.' : 'Two-step sign-in is no longer required.');
  });
}
