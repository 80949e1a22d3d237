import path from 'node:path';
import request from 'supertest';
import { boot, Runtime } from '../../src/boot';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import type { CreatedAccount } from '../../src/services/accounts/accounts';
import { OpenApiCheck } from './openapi-check';
import { createTestDatabase, TestDatabase, TMP_DIR } from './test-db';

export interface TestAccount extends CreatedAccount {
  headers: { PublicKey: string; SecretKey: string };
}

export interface Harness {
  runtime: Runtime;
  /** Creates a fresh account with its API keys. */
  account(email?: string): Promise<TestAccount>;
  /**
   * `n` fresh accounts for the whole describe block: call beside useHarness (`const [alice, bob]
   * = h.accounts(2)`); each object is filled in a beforeAll registered by this call, so it is
   * ready in the hooks declared after it and in every test.
   */
  accounts(n: number): TestAccount[];
  /** supertest against /api/v1 with the account's keys (or none); every answer is checked against the OpenAPI document. */
  api(account?: TestAccount): ApiClient;
  /** Checks an answer of the API against GET /api/v1/openapi.json (h.api does it on every answer). */
  openApi: OpenApiCheck;
}

export interface ApiClient {
  get(path: string): request.Test;
  post(path: string): request.Test;
  delete(path: string): request.Test;
  put(path: string): request.Test;
}

let accountSeq = 0;

/**
 * One database and one app per test file: call at the top of a describe block; the
 * returned object is filled in beforeAll and cleaned up in afterAll. A value of `env` given as
 * a function is read as the app boots, after the beforeAll hooks declared before this call
 * (`SMTP_URL: () => sink.url`).
 */
export function useHarness(env: Record<string, string | (() => string)> = {}): Harness {
  let database: TestDatabase;
  const harness = {} as Harness;

  beforeAll(async () => {
    database = await createTestDatabase();
    const config = loadConfig({
      DATA_DIR: path.join(TMP_DIR, `data_${process.env.CC_TEST_RUN}_${path.basename(database.sqliteFile || database.databaseUrl || 'x')}`),
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : { SQLITE_FILE: database.sqliteFile }),
      LOG_LEVEL: 'silent',
      API_RATE_LIMIT: '0',
      BASE_URL: 'http://campaigns.test',
      ...Object.fromEntries(Object.entries(env).map(([name, value]) => [name, typeof value === 'function' ? value() : value])),
    });
    harness.runtime = await boot(config, createLogger('silent'));
    harness.openApi = new OpenApiCheck((await request(harness.runtime.app).get('/api/v1/openapi.json').expect(200)).body);
  });

  afterAll(async () => {
    await harness.runtime?.close();
    await database?.drop();
  });

  harness.account = async (email?: string) => {
    accountSeq += 1;
    const created = await harness.runtime.services.accounts.create({
      email: email ?? `owner${accountSeq}.${process.pid}@example.com`,
      password: 'correct horse battery staple',
    });
    return { ...created, headers: { PublicKey: created.public_key, SecretKey: created.secret_key } };
  };

  harness.accounts = (n: number) => {
    const accounts = Array.from({ length: n }, () => ({}) as TestAccount);
    beforeAll(async () => {
      for (const account of accounts) Object.assign(account, await harness.account());
    });
    return accounts;
  };

  harness.api = (account?: TestAccount) => {
    const agent = request(harness.runtime.app);
    const withKeys = (test: request.Test) => (account ? test.set(account.headers) : test).expect((res) => harness.openApi.check(res));
    return {
      get: (p) => withKeys(agent.get(`/api/v1${p}`)),
      post: (p) => withKeys(agent.post(`/api/v1${p}`)),
      delete: (p) => withKeys(agent.delete(`/api/v1${p}`)),
      put: (p) => withKeys(agent.put(`/api/v1${p}`)),
    };
  };

  return harness;
}

/** The reference's timestamp form: ISO 8601 UTC with six fractional digits. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
