import type { Request, Response } from 'express';
import type { Services } from '../services';
import { SingleSignOnRefused, SSO_REFUSED } from '../services/accounts/single-sign-on';
import type { TeamMember } from '../services/accounts/team-identity';
import type { Cookies } from './cookies';
import type { WebRoutes } from './routes';

/** The sealed state, nonce and PKCE verifier between leaving for the provider and coming back. */
const SSO_COOKIE = 'cc_sso';

interface SignInParts {
  signInPage: (req: Request, res: Response, status?: number, error?: string) => void;
  finishSignIn: (req: Request, res: Response, member: TeamMember, next: string, summary?: string) => Promise<void>;
}

/** Only a path of this site, never `//elsewhere` or a scheme. */
function localPath(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])/.test(value) ? value : '/';
}

/**
 * "Sign in with single sign-on": off to the provider with state, nonce and a PKCE challenge, and
 * back to the callback, which opens the session. The provider did the person's checks (its own
 * second factor included), so the dashboard's two-step code is not asked for again.
 */
export function mountSingleSignOn(routes: WebRoutes, { singleSignOn }: Pick<Services, 'singleSignOn'>, cookies: Cookies, parts: SignInParts): void {
  if (!singleSignOn.enabled) return;

  routes.publicGet('/login/sso', async (req, res) => {
    const { url, pending } = await singleSignOn.begin(localPath(req.query.next));
    // Lax: the provider's redirect back is a top-level navigation from another site.
    cookies.set(res, SSO_COOKIE, pending, { maxAgeMs: 10 * 60_000, sameSite: 'lax' });
    res.redirect(303, url);
  });

  routes.publicGet('/login/sso/callback', async (req, res) => {
    const sealed = cookies.read(req, SSO_COOKIE);
    cookies.clear(res, SSO_COOKIE);
    try {
      const { member, next } = await singleSignOn.finish(singleSignOn.callbackUrl(req.originalUrl), sealed);
      await parts.finishSignIn(req, res, member, localPath(next), 'With single sign-on');
    } catch (err) {
      if (!(err instanceof SingleSignOnRefused)) throw err;
      parts.signInPage(req, res, 401, err.message || SSO_REFUSED);
    }
  });
}
