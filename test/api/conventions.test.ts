import { useHarness, TestAccount } from '../support/harness';

describe('HTTP conventions of the API', () => {
  const h = useHarness();
  let alice: TestAccount;

  beforeAll(async () => {
    alice = await h.account();
  });

  test('when both key headers are missing then 401 lists both', async () => {
    const res = await h.api().get('/contacts-type').expect(401);
    expect(res.body).toEqual({
      status: 'failed',
      errors: {
        PublicKey: ['The public key field is required.'],
        SecretKey: ['The secret key field is required.'],
      },
    });
  });

  test('when one key header is missing then 401 lists only that one', async () => {
    const res = await h.api().get('/contacts-type').set('PublicKey', alice.public_key).expect(401);
    expect(res.body).toEqual({ status: 'failed', errors: { SecretKey: ['The secret key field is required.'] } });
  });

  test('when the keys are wrong then 401 Invalid API keys', async () => {
    const res = await h.api().get('/contacts-type').set({ PublicKey: alice.public_key, SecretKey: 'sk_wrong' }).expect(401);
    expect(res.body).toEqual({ status: 'failed', errors: 'Invalid API keys' });
  });

  test('when the secret is rotated then the old secret is refused and the new one works', async () => {
    const carol = await h.account();
    const secret = await h.runtime.services.accounts.rotateSecret({ userId: carol.user_id });
    await h.api(carol).get('/contacts-type').expect(401);
    await h.api().get('/contacts-type').set({ PublicKey: carol.public_key, SecretKey: secret }).expect(200);
  });

  test('when the secret key is stored then only its hash is in the database', async () => {
    const row = await h.runtime.db('accounts').where({ id: alice.user_id }).first();
    expect(JSON.stringify(row)).not.toContain(alice.secret_key);
    expect(row.password_hash).toMatch(/^scrypt\$/);
  });

  test('when a path is unknown then 404 Not Found', async () => {
    const res = await h.api(alice).get('/no-such-thing').expect(404);
    expect(res.body).toEqual({ status: 'failed', errors: 'Not Found' });
  });

  test('when a known path gets a wrong method then 405 with Allow', async () => {
    const res = await h.api(alice).put('/contacts-type/add').expect(405);
    expect(res.body).toEqual({ status: 'failed', errors: 'Method Not Allowed' });
    expect(res.headers.allow).toBe('POST');
    const get = await h.api(alice).delete('/contacts-type').expect(405);
    expect(get.headers.allow).toBe('GET, HEAD');
  });

  test('when a request is answered then it carries a request id', async () => {
    const res = await h.api(alice).get('/contacts-type').expect(200);
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await h.api(alice).get('/contacts-type').set('X-Request-Id', 'trace-123').expect(200);
    expect(echoed.headers['x-request-id']).toBe('trace-123');
  });

  test('when a POST comes as JSON, urlencoded or multipart then each parses', async () => {
    await h.api(alice).post('/contacts-type/add').send({ name: 'From JSON' }).expect(200);
    await h.api(alice).post('/contacts-type/add').type('form').send('name=From+form').expect(200);
    await h.api(alice).post('/contacts-type/add').field('name', 'From multipart').expect(200);
    const list = await h.api(alice).get('/contacts-type').expect(200);
    expect(list.body.message.contactTypes.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['From JSON', 'From form', 'From multipart']),
    );
  });

  test('when the JSON body is malformed then 422, and too large then 413', async () => {
    const bad = await h.api(alice).post('/contacts-type/add').set('Content-Type', 'application/json').send('{"name":').expect(422);
    expect(bad.body).toEqual({ status: 'failed', errors: { body: ['The body must be valid JSON.'] } });
    const big = await h.api(alice).post('/contacts-type/add').send({ name: 'x'.repeat(3 * 1024 * 1024) }).expect(413);
    expect(big.body).toEqual({ status: 'failed', errors: 'The request body is too large.' });
  });

  test('when a file is sent to a route that takes none then 422, not 500', async () => {
    const res = await h.api(alice).post('/contacts-type/add').attach('name', Buffer.from('x'), 'x.txt').expect(422);
    expect(res.body.status).toBe('failed');
  });
});

describe('rate limit', () => {
  const h = useHarness({ API_RATE_LIMIT: '3' });

  test('when a key pair exceeds the limit then 429 with Retry-After', async () => {
    const alice = await h.account();
    for (let i = 0; i < 3; i += 1) await h.api(alice).get('/contacts-type').expect(200);
    const res = await h.api(alice).get('/contacts-type').expect(429);
    expect(res.body).toEqual({ status: 'failed', errors: 'Too Many Requests' });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('unexpected failures', () => {
  const h = useHarness();

  test('when the database is gone then 500 Internal Server Error without internals', async () => {
    const alice = await h.account();
    await h.runtime.db.schema.renameTable('contact_types', 'contact_types_gone');
    const res = await h.api(alice).get('/contacts-type').expect(500);
    expect(res.body).toEqual({ status: 'failed', errors: 'Internal Server Error' });
    expect(res.text).not.toMatch(/contact_types|select|stack|at /i);
  });
});
