// A real OpenID Connect provider (oidc-provider 8) on 127.0.0.1 for the single sign-on tests.
// ES module only, so it runs in its own process (startOidcProvider in oidc.ts). The person who
// signs in next is set with POST /test/login; POST /test/tamper makes the next token answer carry
// an ID token signed with the provider's own key but for another audience, or already expired
// (what a token from elsewhere, or a replayed old one, looks like), or one with the right claims
// signed by a key the provider never published, under the published key's id (a forgery).
import http from 'node:http';
import Provider from 'oidc-provider';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';

const { CLIENT_ID, CLIENT_SECRET, REDIRECT_URI } = process.env;
const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
const unpublished = (await generateKeyPair('RS256')).privateKey;

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

let next = { sub: 'nobody', email: 'nobody@example.org', email_verified: true, name: 'Nobody' };
let tamper = null;

const provider = new Provider(issuer, {
  clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code'], response_types: ['code'] }],
  jwks: { keys: [jwk] },
  pkce: { methods: ['S256'], required: () => true },
  features: { devInteractions: { enabled: false } },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ ...next, sub }) }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  // Consent is given for this one client: the test signs in, it does not click through screens.
  loadExistingGrant: async (ctx) => {
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid email profile');
    await grant.save();
    return grant;
  },
});

provider.use(async (ctx, nextMiddleware) => {
  if (ctx.method === 'POST' && (ctx.path === '/test/login' || ctx.path === '/test/tamper')) {
    const body = await new Promise((resolve) => {
      let text = '';
      ctx.req.on('data', (c) => (text += c));
      ctx.req.on('end', () => resolve(JSON.parse(text || '{}')));
    });
    if (ctx.path === '/test/login') next = body;
    else tamper = body.mode ?? null;
    ctx.status = 204;
    return;
  }
  if (ctx.method === 'GET' && ctx.path.startsWith('/interaction/')) {
    const redirectTo = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: next.sub } }, { mergeWithLastSubmission: false });
    ctx.redirect(redirectTo);
    return;
  }
  await nextMiddleware();
  if (ctx.path === '/token' && tamper && ctx.body && typeof ctx.body === 'object' && ctx.body.id_token) {
    const claims = decodeJwt(ctx.body.id_token);
    const now = Math.floor(Date.now() / 1000);
    if (tamper === 'audience') claims.aud = 'another-client';
    if (tamper === 'expired') Object.assign(claims, { iat: now - 7200, exp: now - 3600 });
    const key = tamper === 'unpublished-key' ? unpublished : privateKey;
    ctx.body = { ...ctx.body, id_token: await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'test-key' }).sign(key) };
    tamper = null;
  }
});

server.on('request', provider.callback());
process.stdout.write(`READY ${issuer}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
