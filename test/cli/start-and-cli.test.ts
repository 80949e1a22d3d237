import request from 'supertest';
import { createTestDatabase, TestDatabase } from '../support/test-db';
import { runTs, spawnTs, stopChild, waitForOutput } from '../support/spawn-ts';

/** The two ways an operator meets the service: the first `npm start` and the account CLI. */
describe('server start and account CLI', () => {
  let database: TestDatabase;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    database = await createTestDatabase();
    env = database.databaseUrl
      ? { DATABASE_URL: database.databaseUrl, LOG_LEVEL: 'silent' }
      : { DATABASE_URL: '', SQLITE_FILE: database.sqliteFile, LOG_LEVEL: 'silent' };
  });
  afterAll(() => database.drop());

  test('when the server first starts then it prints a working demo account, and only the first time', async () => {
    const first = spawnTs('src/server.ts', [], { env: { ...env, PORT: '0', HOST: '127.0.0.1' } });
    try {
      const out = await waitForOutput(first, /SecretKey\s+\S+/);
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1];
      const publicKey = /PublicKey\s+(\S+)/.exec(out)![1];
      const secretKey = /SecretKey\s+(\S+)/.exec(out)![1];
      expect(out).toMatch(/email\s+demo@example\.com/);
      expect(out).toMatch(/password\s+\S{12,}/);
      const res = await request(url).get('/api/v1/contacts-type').set({ PublicKey: publicKey, SecretKey: secretKey }).expect(200);
      // A new account starts with one contact type, as listmonk ships default lists.
      expect(res.body.message.contactTypes.map((t: { name: string }) => t.name)).toEqual(['Subscribers']);
    } finally {
      await stopChild(first);
    }

    const second = spawnTs('src/server.ts', [], { env: { ...env, PORT: '0', HOST: '127.0.0.1' } });
    try {
      const out = await waitForOutput(second, /listening on/);
      expect(out).not.toMatch(/demo account/);
    } finally {
      await stopChild(second);
    }
  });

  test('when BASE_URL is an IP address and MAIL_FROM is not set then the server starts with a warning naming MAIL_FROM; with MAIL_FROM set, none', async () => {
    const start = async (extra: NodeJS.ProcessEnv) => {
      const child = spawnTs('src/server.ts', ['--role=web'], { env: { ...env, PORT: '0', HOST: '127.0.0.1', BASE_URL: 'http://127.0.0.1:8080', ...extra } });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      try {
        await waitForOutput(child, /listening on/);
        return stderr;
      } finally {
        await stopChild(child);
      }
    };
    const warned = await start({});
    expect(warned).toMatch(/^Warning: MAIL_FROM is not set, so the service's own mail .* would come from no-reply@127\.0\.0\.1, which mail servers refuse .* Set MAIL_FROM to an address at your domain/m);
    expect(await start({ MAIL_FROM: 'Shop <news@shop.example>' })).not.toContain('Warning');
  });

  test('when account:create runs with --json then it prints one JSON line whose keys work', async () => {
    const result = await runTs('src/cli.ts', ['account:create', '--email', 'ops@example.com', '--name', 'Ops', '--json'], env);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0]);
    expect(created).toEqual({
      user_id: expect.any(Number),
      email: 'ops@example.com',
      public_key: expect.stringMatching(/^pk_/),
      secret_key: expect.stringMatching(/^sk_/),
      password: expect.any(String),
    });

    const withPassword = await runTs('src/cli.ts', ['account:create', '--email', 'pw@example.com', '--password', 'hunter22hunter', '--json'], env);
    expect(withPassword.code).toBe(0);
    expect(JSON.parse(withPassword.stdout)).not.toHaveProperty('password');

    const server = spawnTs('src/server.ts', [], { env: { ...env, PORT: '0', HOST: '127.0.0.1' } });
    try {
      const out = await waitForOutput(server, /listening on/);
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1];
      const types = await request(url).get('/api/v1/contacts-type').set({ PublicKey: created.public_key, SecretKey: created.secret_key }).expect(200);
      expect(types.body.message.contactTypes.map((t: { name: string }) => t.name)).toEqual(['Subscribers']);
    } finally {
      await stopChild(server);
    }
  });

  test('when the email is taken or missing then the CLI fails with a message', async () => {
    const again = await runTs('src/cli.ts', ['account:create', '--email', 'OPS@example.com', '--json'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('The email has already been taken.');
    const missing = await runTs('src/cli.ts', ['account:create', '--json'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('usage:');
  });
});
