import { sha256 } from '../../src/lib/crypto';
import { NOT_FOUND } from '../support/expectations';
import { TestAccount, TIMESTAMP, useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { addMember, addRoleKey, linkToken } from '../support/team';
import { PASSWORD } from '../support/web';

describe('team users and API keys', () => {
  const sink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => sink.url });

  let alice: TestAccount;
  let bob: TestAccount;

  beforeAll(async () => {
    alice = await h.account();
    bob = await h.account();
  });

  const users = async (account: TestAccount) => (await h.api(account).get('/users').expect(200)).body.message.users as Record<string, unknown>[];

  test('when an account is made then its sign-in is listed as its one owner, with the account as user_id', async () => {
    const list = await users(alice);
    expect(list).toEqual([
      {
        id: expect.any(Number),
        user_id: alice.user_id,
        email: alice.email,
        name: alice.email.split('@')[0],
        role: 'owner',
        status: 'active',
        two_factor: 0,
        sso: 0,
        last_sign_in_at: null,
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: expect.stringMatching(TIMESTAMP),
      },
    ]);
  });

  test('when a person is invited then they are listed as invited and a link valid 7 days arrives, stored only as its hash', async () => {
    const res = await h.api(alice).post('/users/invite').send({ email: 'Dana@Team.example', role: 'editor', name: 'Dana' }).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Invitation Sent' });
    const dana = (await users(alice)).find((u) => u.email === 'Dana@Team.example');
    expect(dana).toMatchObject({ role: 'editor', status: 'invited', name: 'Dana', user_id: alice.user_id });
    const token = await linkToken(sink, 'Dana@Team.example', 'invitation');
    const row = await h.runtime.db('team_user_tokens').where({ team_user_id: dana!.id }).first();
    expect(row.token_hash).toBe(sha256(token));
    expect(JSON.stringify(await h.runtime.db('send_messages').where({ email: 'Dana@Team.example' }).select('payload'))).not.toContain(token);
    const days = (new Date(row.expires_at).getTime() - new Date(row.created_at).getTime()) / 86_400_000;
    expect(days).toBeCloseTo(7, 3);
    expect(await users(bob)).toHaveLength(1);
  });

  test('when an invitation is wrong then each field says why, and an address that signs in anywhere is taken', async () => {
    const bad = await h.api(alice).post('/users/invite').send({ email: 'nope', role: 'owner' }).expect(422);
    expect(bad.body).toEqual({ status: 'failed', errors: { email: ['The email must be a valid email address.'], role: ['The selected role is invalid.'] } });
    const missing = await h.api(alice).post('/users/invite').send({}).expect(422);
    expect(missing.body.errors).toEqual({ email: ['The email field is required.'], role: ['The role field is required.'] });
    const taken = await h.api(alice).post('/users/invite').send({ email: bob.email.toUpperCase(), role: 'analyst' }).expect(422);
    expect(taken.body).toEqual({ status: 'failed', errors: { email: ['The email has already been taken.'] } });
  });

  test('when an invited person accepts then they sign in with their password, and the link works once', async () => {
    const email = 'erin@team.example';
    await h.api(alice).post('/users/invite').send({ email, role: 'analyst' }).expect(200);
    const token = await linkToken(sink, email, 'invitation');
    expect(await h.runtime.services.teamUsers.signIn(email, PASSWORD)).toBeUndefined();
    const member = await h.runtime.services.teamUsers.acceptInvitation(token, { name: 'Erin', password: PASSWORD, password_confirmation: PASSWORD });
    expect(member).toMatchObject({ email, role: 'analyst', status: 'active', name: 'Erin', user_id: alice.user_id });
    expect(await h.runtime.services.teamUsers.acceptInvitation(token, { password: 'another password', password_confirmation: 'another password' })).toBeUndefined();
    expect(await h.runtime.services.teamUsers.signIn(email, PASSWORD)).toMatchObject({ email, role: 'analyst' });
    expect((await users(alice)).find((u) => u.email === email)).toMatchObject({ status: 'active', last_sign_in_at: expect.stringMatching(TIMESTAMP) });
  });

  test('when an invitation is older than 7 days then its link no longer works', async () => {
    const email = 'late@team.example';
    await h.api(alice).post('/users/invite').send({ email, role: 'editor' }).expect(200);
    const token = await linkToken(sink, email, 'invitation');
    await h.runtime.db('team_user_tokens').where({ token_hash: sha256(token) }).update({ expires_at: new Date(Date.now() - 1000).toISOString() });
    expect(await h.runtime.services.teamUsers.invitation(token)).toBeUndefined();
    expect(await h.runtime.services.teamUsers.acceptInvitation(token, { password: PASSWORD, password_confirmation: PASSWORD })).toBeUndefined();
  });

  test('when a role or status changes then the list says so, a disabled person cannot sign in, and the owner changes only by handing over', async () => {
    const fay = await addMember(h, sink, alice, 'editor', 'fay@team.example');
    const update = (id: number, body: Record<string, unknown>) => h.api(alice).post(`/users/update?id=${id}`).send(body);
    expect((await update(fay.id, { role: 'admin' }).expect(200)).body).toEqual({ status: 'success', message: 'Updated Successfully' });
    await update(fay.id, { status: 'disabled' }).expect(200);
    expect((await users(alice)).find((u) => u.id === fay.id)).toMatchObject({ role: 'admin', status: 'disabled' });
    expect(await h.runtime.services.teamUsers.signIn(fay.email, PASSWORD)).toBeUndefined();
    await update(fay.id, { status: 'active' }).expect(200);
    const ownerId = (await users(alice)).find((u) => u.role === 'owner')!.id as number;
    const refused = await update(ownerId, { status: 'disabled' }).expect(409);
    expect(refused.body).toEqual({ status: 'failed', errors: "The owner's role and status change only when the owner hands ownership to an admin." });
    expect((await update(fay.id, { role: 'boss' }).expect(422)).body.errors).toEqual({ role: ['The selected role is invalid.'] });
    await update(999999, { role: 'editor' }).expect(404);
    // Bob cannot reach alice's people.
    expect((await h.api(bob).post(`/users/update?id=${fay.id}`).send({ role: 'analyst' }).expect(404)).body).toEqual(NOT_FOUND);
  });

  test('when the owner hands ownership to an active admin then that admin is the one owner and the former owner an admin', async () => {
    const account = await h.account();
    const gil = await addMember(h, sink, account, 'admin', 'gil@team.example');
    const adminKey = await addRoleKey(h, account, 'admin');
    const byAdmin = await h.api(adminKey).post(`/users/update?id=${gil.id}`).send({ role: 'owner' }).expect(409);
    expect(byAdmin.body.errors).toBe('Only the owner can hand over ownership.');
    await h.api(account).post(`/users/update?id=${gil.id}`).send({ role: 'owner' }).expect(200);
    const list = await users(account);
    expect(list.filter((u) => u.role === 'owner').map((u) => u.email)).toEqual(['gil@team.example']);
    expect(list.find((u) => u.email === account.email)).toMatchObject({ role: 'admin' });
  });

  test('when a person is removed then they are gone and cannot sign in; the owner cannot be removed', async () => {
    const hal = await addMember(h, sink, alice, 'analyst', 'hal@team.example');
    expect((await h.api(alice).delete(`/users/delete?id=${hal.id}`).expect(200)).body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect((await users(alice)).some((u) => u.id === hal.id)).toBe(false);
    expect(await h.runtime.services.teamUsers.signIn(hal.email, PASSWORD)).toBeUndefined();
    const ownerId = (await users(alice)).find((u) => u.role === 'owner')!.id as number;
    expect((await h.api(alice).delete(`/users/delete?id=${ownerId}`).expect(409)).body.errors).toBe('The owner cannot be removed; hand ownership to an admin first.');
  });

  test('when an API key is made then its secret shows once, it works with its role, is listed without the secret, and stops working when deleted', async () => {
    const res = await h.api(alice).post('/api-keys/save').send({ name: 'Reports', role: 'analyst' }).expect(200);
    const key = res.body.message.apiKey;
    expect(key).toEqual({ id: expect.any(Number), name: 'Reports', role: 'analyst', public_key: expect.stringMatching(/^pk_/), secret_key: expect.stringMatching(/^sk_/), last_used_at: null, created_at: expect.stringMatching(TIMESTAMP), made_by: { id: null, name: 'Original key' } });
    expect((await h.runtime.db('api_keys').where({ id: key.id }).first()).secret_key_hash).toBe(sha256(key.secret_key));
    const headers = { PublicKey: key.public_key, SecretKey: key.secret_key };
    await h.api().get('/contacts-type').set(headers).expect(200);
    const wrong = await h.api().get('/contacts-type').set({ ...headers, SecretKey: 'sk_wrong' }).expect(401);
    expect(wrong.body).toEqual({ status: 'failed', errors: 'Invalid API keys' });
    const listed = (await h.api(alice).get('/api-keys').expect(200)).body.message.apiKeys;
    expect(listed).toEqual([{ id: key.id, name: 'Reports', role: 'analyst', public_key: key.public_key, last_used_at: expect.stringMatching(TIMESTAMP), created_at: key.created_at, made_by: { id: null, name: 'Original key' } }]);
    await h.api(alice).delete(`/api-keys/delete?id=${key.id}`).expect(200);
    expect((await h.api().get('/contacts-type').set(headers).expect(401)).body).toEqual({ status: 'failed', errors: 'Invalid API keys' });
    expect((await h.api(bob).get('/api-keys').expect(200)).body.message.apiKeys).toEqual([]);
  });

  test('when an admin makes a key then it may not be an owner key, and the original pair still acts as the owner', async () => {
    const admin = await addRoleKey(h, alice, 'admin');
    const res = await h.api(admin).post('/api-keys/save').send({ name: 'Too much', role: 'owner' }).expect(422);
    expect(res.body).toEqual({ status: 'failed', errors: { role: ['The selected role is invalid.'] } });
    await h.api(admin).post('/api-keys/save').send({ name: 'Fine', role: 'editor' }).expect(200);
    await h.api(alice).post('/api-keys/save').send({ name: 'Second owner key', role: 'owner' }).expect(200);
  });
});
