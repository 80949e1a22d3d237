import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { ensureAppSecret } from '../../src/services/accounts/app-secret';
import { useHarness } from '../support/harness';

describe('the app secret (links, sealed webhook secrets)', () => {
  const h = useHarness();
  const file = () => h.runtime.config.appSecretFile;

  test('when APP_SECRET is unset then one secret is generated into a file only the owner may read, not into the database, and reused by every later start', async () => {
    const db = h.runtime.db;
    expect(h.runtime.secret).toMatch(/^[\w-]{43}$/);
    expect(fs.readFileSync(file(), 'utf8').trim()).toBe(h.runtime.secret);
    expect(fs.statSync(file()).mode & 0o777).toBe(0o600);
    expect(await db('app_settings').where({ key: 'hmac_secret' })).toEqual([]);
    // Nothing in any table holds it: the database alone cannot sign links or open sealed secrets.
    const settings = (await db('app_settings').select('value')).map((r: { value: unknown }) => String(r.value));
    expect(settings.filter((v) => v.includes(h.runtime.secret))).toEqual([]);
    expect(await ensureAppSecret(db, undefined, file())).toBe(h.runtime.secret);
  });

  test('when the file is where the data is then it sits beside the SQLite file, or under DATA_DIR with PostgreSQL', () => {
    const sqlite = loadConfig({ DATA_DIR: '/srv/campaigns', SQLITE_FILE: '/srv/db/campaigns.sqlite3' });
    expect(sqlite.appSecretFile).toBe('/srv/db/campaigns.sqlite3.secret');
    const pg = loadConfig({ DATA_DIR: '/srv/campaigns', DATABASE_URL: 'postgres://db/campaigns' });
    expect(pg.appSecretFile).toBe('/srv/campaigns/app-secret');
    expect(loadConfig({ APP_SECRET_FILE: '/run/secrets/app' }).appSecretFile).toBe('/run/secrets/app');
  });

  test('when an earlier version kept the generated secret in app_settings then the first start moves it to the file and removes it from the table', async () => {
    const db = h.runtime.db;
    const moved = path.join(path.dirname(file()), `moved-${process.pid}.secret`);
    fs.rmSync(moved, { force: true });
    await db('app_settings').insert({ key: 'hmac_secret', value: 'the-secret-of-an-earlier-version' });
    expect(await ensureAppSecret(db, undefined, moved)).toBe('the-secret-of-an-earlier-version');
    expect(fs.readFileSync(moved, 'utf8').trim()).toBe('the-secret-of-an-earlier-version');
    expect(fs.statSync(moved).mode & 0o777).toBe(0o600);
    expect(await db('app_settings').where({ key: 'hmac_secret' })).toEqual([]);
    // Later starts read the file.
    expect(await ensureAppSecret(db, undefined, moved)).toBe('the-secret-of-an-earlier-version');
    expect(fs.readdirSync(path.dirname(moved)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  test('when several processes start at once then they agree on one secret', async () => {
    const fresh = path.join(path.dirname(file()), `fresh-${process.pid}.secret`);
    fs.rmSync(fresh, { force: true });
    const secrets = await Promise.all(Array.from({ length: 5 }, () => ensureAppSecret(h.runtime.db, undefined, fresh)));
    expect(new Set(secrets).size).toBe(1);
    expect(fs.readFileSync(fresh, 'utf8').trim()).toBe(secrets[0]);
  });

  test('when APP_SECRET is set then it is used as given and no file is written', async () => {
    const unused = path.join(path.dirname(file()), `unused-${process.pid}.secret`);
    expect(await ensureAppSecret(h.runtime.db, 'configured-secret', unused)).toBe('configured-secret');
    expect(fs.existsSync(unused)).toBe(false);
  });
});
