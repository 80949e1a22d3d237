import { ensureAppSecret } from '../../src/services/accounts/app-secret';
import { useHarness } from '../support/harness';

describe('the HMAC secret for links', () => {
  const h = useHarness();

  test('when APP_SECRET is unset then one secret is generated, stored and reused by every later start', async () => {
    const db = h.runtime.db;
    const stored = await db('app_settings').where({ key: 'hmac_secret' }).first('value');
    expect(stored.value).toBe(h.runtime.secret);
    expect(h.runtime.secret).toMatch(/^[\w-]{43}$/);
    expect(await ensureAppSecret(db, undefined)).toBe(h.runtime.secret);
  });

  test('when APP_SECRET is set then it is used as given', async () => {
    expect(await ensureAppSecret(h.runtime.db, 'configured-secret')).toBe('configured-secret');
  });
});
