import type { OidcConfig } from '../../config';
import { insertId, nowValue } from '../../db/dialect';
import { emailKey } from '../../lib/email-key';
import { openSecret, sealSecret } from '../../lib/crypto';
import { lazy } from '../../lib/lazy';
import { recordAudit } from '../shared/audit-writer';
import type { ServiceDeps } from '../context';
import { TEAM_MEMBER_COLUMNS, TeamMember, teamMemberOf, userActor } from './team-identity';

// ES module only; Node loads it with require() (20.19 and later). Loaded on first use.
const oidc = lazy(() => require('openid-client') as typeof import('openid-client'));

const LOGIN_PURPOSE = 'oidc-login';
/** How long the provider's page may take before the callback. */
const LOGIN_TTL_MS = 10 * 60_000;

/** What the browser carries to the provider and back, sealed: nobody can read or change it. */
interface PendingLogin {
  state: string;
  nonce: string;
  verifier: string;
  next: string;
  until: number;
}

/** Why a single sign-on was refused, in words for the sign-in page. */
export class SingleSignOnRefused extends Error {}

export const SSO_REFUSED = 'Single sign-on did not work. Try again, or sign in with your email and password.';
export const SSO_NOT_ALLOWED = 'Your address cannot sign in here. Ask your account\'s owner for an invitation.';

/**
 * Single sign-on with one OpenID Connect provider (OIDC_*), through openid-client: the
 * authorization code flow with PKCE, state and nonce; the ID token's signature, issuer,
 * audience and expiry are checked by openid-client against the provider's discovery document
 * and keys (the signature always: see `configuration`). A person is found by the provider's
 * subject, stored at their first sign-in; else by a verified address not yet linked to a subject
 * (an invited person is activated); a first sign-in from a domain listed in OIDC_ALLOWED_DOMAINS
 * joins the account whose owner has that domain, with OIDC_DEFAULT_ROLE, when one is set.
 */
export function createSingleSignOnService({ db, config, secret: appSecret }: Pick<ServiceDeps, 'db' | 'config' | 'secret'>) {
  const settings = config.oidc;
  let discovered: Promise<import('openid-client').Configuration> | undefined;

  function configuration(s: OidcConfig) {
    discovered ??= (async () => {
      const client = oidc();
      const local = new URL(s.issuer).protocol === 'http:';
      // openid-client trusts an ID token from the token endpoint on the strength of TLS alone;
      // the non-repudiation checks verify its signature against the provider's published keys,
      // so a token signed with any other key is refused.
      const execute = [client.enableNonRepudiationChecks, ...(local ? [client.allowInsecureRequests] : [])];
      return client.discovery(new URL(s.issuer), s.clientId, s.clientSecret, undefined, { execute });
    })().catch((err) => {
      discovered = undefined;
      throw err;
    });
    return discovered;
  }

  const redirectUri = () => new URL('/login/sso/callback', config.baseUrl).toString();

  async function memberFor(s: OidcConfig, claims: Record<string, unknown>): Promise<TeamMember> {
    const issuer = String(claims.iss);
    const subject = String(claims.sub);
    const linked = await db('team_users').where({ sso_issuer: issuer, sso_subject: subject }).first([...TEAM_MEMBER_COLUMNS]);
    if (linked) {
      if (linked.status === 'disabled') throw new SingleSignOnRefused(SSO_NOT_ALLOWED);
      return teamMemberOf(linked);
    }
    const email = typeof claims.email === 'string' ? claims.email.trim() : '';
    // An address the provider has not verified could be anyone's.
    if (!email || claims.email_verified === false) throw new SingleSignOnRefused(SSO_NOT_ALLOWED);
    const domain = email.split('@').pop()!.toLowerCase();
    if (s.allowedDomains.length > 0 && !s.allowedDomains.includes(domain)) throw new SingleSignOnRefused(SSO_NOT_ALLOWED);
    const key = emailKey(email);
    return db.transaction(async (trx) => {
      const now = nowValue();
      const known = await trx('team_users').where({ email_key: key }).first([...TEAM_MEMBER_COLUMNS, 'sso_subject']);
      if (known) {
        if (known.status === 'disabled' || known.sso_subject) throw new SingleSignOnRefused(SSO_NOT_ALLOWED);
        await trx('team_users').where({ id: known.id }).update({ sso_issuer: issuer, sso_subject: subject, status: 'active', updated_at: now });
        return teamMemberOf({ ...known, status: 'active' });
      }
      // Joining by domain is the operator's decision, domain by domain: an owner's address at a
      // domain (gmail.com, say) never lets its other people in by itself.
      if (!s.defaultRole || !s.allowedDomains.includes(domain)) throw new SingleSignOnRefused(SSO_NOT_ALLOWED);
      // The account whose owner has this domain; none, or several, and nobody is added.
      const owners = await trx('team_users as t')
        .join('accounts as a', 'a.id', 't.user_id')
        .whereNull('a.deleted_at')
        .where('t.role', 'owner')
        .where('t.email_key', 'like', `%@${emailKey(`x@${domain}`).split('@')[1]}`)
        .limit(2)
        .pluck('t.user_id');
      if (owners.length !== 1) throw new SingleSignOnRefused(SSO_NOT_ALLOWED);
      const name = typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim().slice(0, 255) : email.split('@')[0];
      const id = await insertId(trx, 'team_users', { user_id: owners[0], email, email_key: key, name, role: s.defaultRole, status: 'active', password_hash: null, sso_issuer: issuer, sso_subject: subject, created_at: now, updated_at: now });
      const member = teamMemberOf(await trx('team_users').where({ id }).first([...TEAM_MEMBER_COLUMNS]));
      await recordAudit(trx, { userId: member.user_id, actor: userActor(member) }, { action: 'user.invited', recordType: 'user', recordId: member.id, summary: `${email} joined by single sign-on as ${s.defaultRole}` }, now);
      return member;
    });
  }

  return {
    enabled: Boolean(settings),

    /** The callback's address as the provider was told it (BASE_URL's, whatever proxy is in between). */
    callbackUrl(originalUrl: string): URL {
      const given = new URL(originalUrl, 'http://callback.invalid');
      const url = new URL(redirectUri());
      url.search = given.search;
      return url;
    },

    /** The provider's authorization URL, and the sealed state the browser keeps until the callback. */
    async begin(next: string): Promise<{ url: string; pending: string }> {
      if (!settings) throw new SingleSignOnRefused(SSO_REFUSED);
      const client = oidc();
      const pending: PendingLogin = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier(), next, until: Date.now() + LOGIN_TTL_MS };
      const url = client.buildAuthorizationUrl(await configuration(settings), {
        redirect_uri: redirectUri(),
        scope: 'openid email profile',
        state: pending.state,
        nonce: pending.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
        code_challenge_method: 'S256',
      });
      return { url: url.toString(), pending: sealSecret(appSecret, LOGIN_PURPOSE, JSON.stringify(pending)) };
    },

    /**
     * The callback: the code is exchanged and the ID token checked (signature, issuer, audience,
     * expiry, nonce; the state against the sealed one). Answers the person and where to go.
     */
    async finish(callbackUrl: URL, sealed: string | undefined): Promise<{ member: TeamMember; next: string }> {
      if (!settings || !sealed) throw new SingleSignOnRefused(SSO_REFUSED);
      let pending: PendingLogin;
      try {
        pending = JSON.parse(openSecret(appSecret, LOGIN_PURPOSE, sealed)) as PendingLogin;
      } catch {
        throw new SingleSignOnRefused(SSO_REFUSED);
      }
      if (pending.until < Date.now()) throw new SingleSignOnRefused(SSO_REFUSED);
      const client = oidc();
      let claims: Record<string, unknown> | undefined;
      try {
        const tokens = await client.authorizationCodeGrant(await configuration(settings), callbackUrl, {
          pkceCodeVerifier: pending.verifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims() as Record<string, unknown> | undefined;
        // A provider may keep the address out of the ID token (oidc-provider does, by the
        // specification's default): then it comes from the userinfo endpoint, for the same subject.
        if (claims && typeof claims.email !== 'string') {
          const info = await client.fetchUserInfo(await configuration(settings), tokens.access_token, String(claims.sub));
          claims = { ...info, ...claims };
        }
      } catch {
        throw new SingleSignOnRefused(SSO_REFUSED);
      }
      if (!claims) throw new SingleSignOnRefused(SSO_REFUSED);
      const member = await memberFor(settings, claims);
      if (member.status !== 'active') throw new SingleSignOnRefused(SSO_NOT_ALLOWED);
      await db('team_users').where({ id: member.id }).update({ last_sign_in_at: nowValue() });
      return { member, next: pending.next };
    },
  };
}

export type SingleSignOnService = ReturnType<typeof createSingleSignOnService>;
