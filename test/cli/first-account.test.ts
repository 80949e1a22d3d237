import request from 'supertest';
import { createTestDatabase, TestDatabase } from '../support/test-db';
import { spawnTs, stopChild, waitForOutput } from '../support/spawn-ts';
import { metaCsrf, setCookie } from '../support/web';

/** A container's first start with ADMIN_EMAIL and ADMIN_PASSWORD: the operator's account, not the demo one. */
describe('first account from ADMIN_EMAIL and ADMIN_PASSWORD', () => {
  let database: TestDatabase;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    database = await createTestDatabase();
    const db = database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : { DATABASE_URL: '', SQLITE_FILE: database.sqliteFile };
    env = { ...db, LOG_LEVEL: 'silent', PORT: '0', HOST: '127.0.0.1', ADMIN_EMAIL: 'Owner@Example.com', ADMIN_PASSWORD: 'a long admin password' };
  });
  afterAll(() => database.drop());

  test('when the server first starts with ADMIN_EMAIL and ADMIN_PASSWORD then that account is made instead of the demo account, its password signs in, and a restart makes none', async () => {
    const first = spawnTs('src/server.ts', [], { env });
    try {
      const out = await waitForOutput(first, /SecretKey\s+\S+/);
      expect(out).not.toMatch(/demo/i);
      expect(out).toMatch(/email\s+Owner@Example\.com/);
      // The operator chose the password: it is not printed.
      expect(out).not.toContain('a long admin password');
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1];
      const publicKey = /PublicKey\s+(\S+)/.exec(out)![1];
      const secretKey = /SecretKey\s+(\S+)/.exec(out)![1];
      const types = await request(url).get('/api/v1/contacts-type').set({ PublicKey: publicKey, SecretKey: secretKey }).expect(200);
      expect(types.body.message.contactTypes.map((t: { name: string }) => t.name)).toEqual(['Subscribers']);

      const agent = request.agent(url);
      const page = await agent.get('/login').expect(200);
      const signedIn = await agent.post('/login').type('form').send({ _csrf: metaCsrf(page.text), email: 'owner@example.com', password: 'a long admin password' }).expect(303);
      expect(setCookie(signedIn, 'cc_session')).toBeDefined();
      const demo = await agent.post('/login').type('form').send({ _csrf: metaCsrf(page.text), email: 'demo@example.com', password: 'a long admin password' });
      expect(demo.status).not.toBe(303);
    } finally {
      await stopChild(first);
    }

    const second = spawnTs('src/server.ts', [], { env: { ...env, ADMIN_EMAIL: 'other@example.com' } });
    try {
      const out = await waitForOutput(second, /listening on/);
      expect(out).not.toMatch(/account was created/);
    } finally {
      await stopChild(second);
    }
  });
});
