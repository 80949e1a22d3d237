import { ConfigError, loadConfig } from '../../src/config';

describe('configuration of the audit log and single sign-on', () => {
  test('when AUDIT_RETENTION_DAYS is unset then entries are kept 365 days; 0 keeps them for ever', () => {
    expect(loadConfig({}).auditRetentionDays).toBe(365);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '0' }).auditRetentionDays).toBe(0);
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: '-1' })).toThrow(ConfigError);
  });

  test('when no OIDC_* is set then there is no single sign-on', () => {
    expect(loadConfig({}).oidc).toBeUndefined();
  });

  test('when the provider is set then its domains are read lower case and the default role defaults to none', () => {
    const env = { OIDC_ISSUER: 'https://login.example.com/realms/acme', OIDC_CLIENT_ID: 'campaigns', OIDC_CLIENT_SECRET: 's' };
    expect(loadConfig({ ...env, OIDC_ALLOWED_DOMAINS: 'Acme.com, acme.de ,' }).oidc).toEqual({
      issuer: env.OIDC_ISSUER, clientId: 'campaigns', clientSecret: 's', allowedDomains: ['acme.com', 'acme.de'], defaultRole: null,
    });
    expect(loadConfig({ ...env, OIDC_DEFAULT_ROLE: 'Editor' }).oidc?.defaultRole).toBe('editor');
  });

  test('when the provider is set in part, over http elsewhere, or with owner as default role then start refuses it', () => {
    expect(() => loadConfig({ OIDC_ISSUER: 'https://login.example.com' })).toThrow('OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set together');
    expect(() => loadConfig({ OIDC_ISSUER: 'http://login.example.com', OIDC_CLIENT_ID: 'c', OIDC_CLIENT_SECRET: 's' })).toThrow('OIDC_ISSUER must be an https:// URL');
    expect(() => loadConfig({ OIDC_ISSUER: 'https://login.example.com', OIDC_CLIENT_ID: 'c', OIDC_CLIENT_SECRET: 's', OIDC_DEFAULT_ROLE: 'owner' })).toThrow(ConfigError);
  });
});
