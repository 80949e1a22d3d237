import * as keyMakersFromLog from '../../migrations/20261129_0801_key-makers-from-log';
import { audited } from '../../src/services/shared/audit-writer';
import { audienceOf, berlin, singleSendBody } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { addMember, addRoleKey, signInMember } from '../support/team';
import { signIn, WebClient } from '../support/web';

const REFUSED = { status: 'failed', errors: 'You do not have permission to do this.' };
const UNAUTHENTICATED = 401;

/** An API client made from a key the answer of POST /api-keys (dashboard) showed. */
function keyFrom(account: TestAccount, html: string): TestAccount {
  const publicKey = /id="created-public-key">([^<]+)</.exec(html)![1];
  const secretKey = /id="created-secret-key">([^<]+)</.exec(html)![1];
  return { ...account, public_key: publicKey, secret_key: secretKey, headers: { PublicKey: publicKey, SecretKey: secretKey } };
}

describe('roles and keys: nobody climbs above their role, and a key goes with its maker', () => {
  const sink = useSmtpSink();
  const h = useHarness({ SMTP_URL: () => sink.url });

  let owner: TestAccount;
  let ownerWeb: WebClient;

  beforeEach(async () => {
    owner = await h.account();
    ownerWeb = await signIn(h, owner);
  });

  const entries = async (action: string) =>
    (await h.runtime.db('audit_log').where({ user_id: owner.user_id, action }).orderBy('id', 'asc').select('actor_name', 'record_id', 'summary')) as { actor_name: string; record_id: string | null; summary: string }[];
  const ownerRow = async () => h.runtime.db('team_users').where({ user_id: owner.user_id, role: 'owner' }).first('id', 'email');

  test('when an admin asks for a new secret of the original key pair then it is refused, the owner\'s key keeps working, and the admin is not offered it', async () => {
    const admin = await addMember(h, sink, owner, 'admin');
    const adminWeb = await signInMember(h, owner, admin.email);
    const page = await adminWeb.get('/api-keys').expect(200);
    expect(page.text).not.toContain('action="/api-keys/rotate"');
    expect(page.text).toContain("Only the account's owner can rotate it");
    // Nor offered a key above its own role.
    expect(page.text).not.toContain('<option value="owner">');

    const refused = await adminWeb.post('/api-keys/rotate').expect(403);
    expect(refused.text).toContain('You do not have permission to do this.');
    expect(refused.text).not.toMatch(/id="new-secret-key"/);
    await h.api(owner).get('/users').expect(200);
    // So the admin cannot make themself the owner with it either.
    expect((await h.api(owner).get('/users').expect(200)).body.message.users.find((u: { id: number }) => u.id === admin.id).role).toBe('admin');
    expect(await entries('api_key.created')).toEqual([]);

    const rotated = await ownerWeb.post('/api-keys/rotate').expect(200);
    const secret = /id="new-secret-key">([^<]+)</.exec(rotated.text)![1];
    await h.api(owner).get('/users').expect(UNAUTHENTICATED);
    await h.api({ ...owner, headers: { PublicKey: owner.public_key, SecretKey: secret } }).get('/users').expect(200);
  });

  test('when an admin key hands ownership to its admin or makes an owner key then both are refused and the account keeps its owner', async () => {
    const admin = await addMember(h, sink, owner, 'admin');
    const adminKey = await addRoleKey(h, owner, 'admin');
    expect((await h.api(adminKey).post(`/users/update?id=${admin.id}`).send({ role: 'owner' }).expect(409)).body).toEqual({ status: 'failed', errors: 'Only the owner can hand over ownership.' });
    expect((await h.api(adminKey).post('/api-keys/save').send({ name: 'Mine', role: 'owner' }).expect(422)).body).toEqual({ status: 'failed', errors: { role: ['The selected role is invalid.'] } });
    const before = await ownerRow();
    expect((await h.api(adminKey).post(`/users/update?id=${before.id}`).send({ role: 'editor' }).expect(409)).body.errors).toMatch(/owner/);
    expect((await h.api(owner).delete(`/users/delete?id=${before.id}`).expect(409)).body.errors).toMatch(/owner cannot be removed/);
    expect(await ownerRow()).toEqual(before);
  });

  test('when an admin makes keys and is then demoted and removed then the keys follow: shown with their maker, lowered to the new role, then revoked, each in the log', async () => {
    const admin = await addMember(h, sink, owner, 'admin', `dana.${process.pid}@team.example`);
    const adminName = String((await h.runtime.db('team_users').where({ id: admin.id }).first('name')).name);
    const adminWeb = await signInMember(h, owner, admin.email);
    const made = keyFrom(owner, (await adminWeb.post('/api-keys', { name: 'Dana admin key', role: 'admin' }).expect(200)).text);
    // A key made with that key belongs to the same person.
    const second = (await h.api(made).post('/api-keys/save').send({ name: 'Dana script', role: 'editor' }).expect(200)).body.message.apiKey;
    const secondKey: TestAccount = { ...owner, headers: { PublicKey: second.public_key, SecretKey: second.secret_key } };
    const ownersKey = await addRoleKey(h, owner, 'admin');

    const listed = (await h.api(owner).get('/api-keys').expect(200)).body.message.apiKeys as { name: string; role: string; made_by: unknown }[];
    expect(listed.map((k) => [k.name, k.role, k.made_by]).sort()).toEqual([
      ['Dana admin key', 'admin', { id: admin.id, name: adminName }],
      ['Dana script', 'editor', { id: admin.id, name: adminName }],
      ['admin key', 'admin', { id: null, name: 'Original key' }],
    ]);
    const page = (await ownerWeb.get('/api-keys').expect(200)).text;
    expect(page).toContain('<th>Made by</th>');
    expect(page).toMatch(new RegExp(`Dana admin key</td>\\s*<td>Admin</td>\\s*<td>${adminName}</td>`));

    // Demoted to editor: the admin key can no longer reach the team.
    await h.api(owner).post(`/users/update?id=${admin.id}`).send({ role: 'editor' }).expect(200);
    expect((await h.api(made).get('/users').expect(403)).body).toEqual(REFUSED);
    await h.api(made).get('/contacts-type').expect(200);
    const roles = Object.fromEntries((await h.runtime.db('api_keys').where({ user_id: owner.user_id }).select('name', 'role')).map((k) => [k.name, k.role]));
    expect(roles).toEqual({ 'Dana admin key': 'editor', 'Dana script': 'editor', 'admin key': 'admin' });
    expect((await entries('user.role_changed')).map((e) => e.summary)).toEqual([`${admin.email}: admin → editor; 1 API key lowered to editor (Dana admin key)`]);

    // Disabled: their keys stop at once (the key was just used, so it is in this process's cache), and work again once enabled.
    await h.api(owner).post(`/users/update?id=${admin.id}`).send({ status: 'disabled' }).expect(200);
    await h.api(made).get('/contacts-type').expect(UNAUTHENTICATED);
    await h.api(secondKey).get('/contacts-type').expect(UNAUTHENTICATED);
    await h.api(ownersKey).get('/contacts-type').expect(200);
    await h.api(owner).post(`/users/update?id=${admin.id}`).send({ status: 'active' }).expect(200);
    await h.api(made).get('/contacts-type').expect(200);

    // Removed: every key they made stops at once; the owner's key stays.
    await h.api(owner).delete(`/users/delete?id=${admin.id}`).expect(200);
    await h.api(made).get('/contacts-type').expect(UNAUTHENTICATED);
    await h.api(secondKey).get('/contacts-type').expect(UNAUTHENTICATED);
    await h.api(ownersKey).get('/users').expect(200);
    expect((await entries('user.deleted')).map((e) => e.summary)).toEqual([`${admin.email}; 2 API keys revoked (Dana admin key, Dana script)`]);
  });

  test('when the owner hands ownership over then the former owner\'s owner keys become admin keys', async () => {
    const admin = await addMember(h, sink, owner, 'admin');
    const ownerKey = keyFrom(owner, (await ownerWeb.post('/api-keys', { name: 'Owner script', role: 'owner' }).expect(200)).text);
    await ownerWeb.post(`/team/${admin.id}/role`, { role: 'owner' }).expect(303);
    expect((await h.runtime.db('api_keys').where({ public_key: ownerKey.public_key }).first('role')).role).toBe('admin');
    expect((await h.api(ownerKey).post(`/users/update?id=${admin.id}`).send({ role: 'admin' }).expect(409)).body.errors).toMatch(/owner/);
    expect((await entries('user.ownership_transferred')).map((e) => e.summary)).toEqual([`Ownership handed to ${admin.email}; 1 API key lowered to admin (Owner script)`]);
  });

  test('when an analyst key pauses, resumes or cancels a send then each is refused and the send is as it was', async () => {
    const analyst = await addRoleKey(h, owner, 'analyst');
    const a = await audienceOf(h, owner, await berlin(h));
    const utr = (await h.api(owner).post('/single/send/create').send(singleSendBody(a, { schedule_type: 1, schedule_date: '2099-01-01', schedule_time: '09:00:00' })).expect(200)).body.message.utr;
    const state = async () => h.runtime.db('single_sends').where({ utr }).first('status', 'due_at', 'updated_at');
    const before = await state();
    for (const action of ['pause', 'resume', 'cancel']) {
      expect([action, (await h.api(analyst).get(`/single/send/${action}?utr=${utr}`)).body]).toEqual([action, REFUSED]);
      expect(await state()).toEqual(before);
    }
    // The same request with the right to change sends works.
    await h.api(owner).get(`/single/send/cancel?utr=${utr}`).expect(200);
    expect((await state()).status).not.toBe(before.status);
  });

  test('when a route registered as a read records a change then the change fails, names the route, and is not kept', async () => {
    const route = { name: 'GET /contacts-type/peek', effect: 'reads' as const, recorded: [] };
    const change = audited(
      h.runtime.db,
      { userId: owner.user_id, route },
      (trx) => trx('contact_types').insert({ user_id: owner.user_id, name: 'Slipped in', created_at: new Date().toISOString(), updated_at: new Date().toISOString() }),
      () => ({ action: 'contact_type.created', summary: 'Slipped in' }),
    );
    await expect(change).rejects.toThrow('GET /contacts-type/peek is registered as a read but recorded contact_type.created');
    expect(await h.runtime.db('contact_types').where({ user_id: owner.user_id, name: 'Slipped in' }).first()).toBeUndefined();
    expect(await entries('contact_type.created')).toEqual([]);
  });
});

describe('key makers of keys made before they were recorded', () => {
  const h = useHarness();

  test('when the makers are read from the audit log then a person\'s key, a key made with it and a key of the original pair get theirs, and a key with no entry keeps none', async () => {
    const { db } = h.runtime;
    const owner = await h.account();
    const person = await db('team_users').where({ user_id: owner.user_id, role: 'owner' }).first('id', 'name');
    const now = new Date().toISOString();
    const key = async (name: string) => {
      await db('api_keys').insert({ user_id: owner.user_id, name, role: 'editor', public_key: `pk_${name}_${owner.user_id}`, secret_key_hash: 'x', created_at: now, updated_at: now });
      return Number((await db('api_keys').where({ user_id: owner.user_id, name }).first('id')).id);
    };
    const entry = (id: number, actor: { actor_type: string; actor_id: number | null; actor_name: string }) =>
      db('audit_log').insert({ user_id: owner.user_id, ...actor, action: 'api_key.created', record_type: 'api_key', record_id: String(id), summary: '', created_at: now });
    const byPerson = await key('by-person');
    await entry(byPerson, { actor_type: 'user', actor_id: Number(person.id), actor_name: String(person.name) });
    const byKey = await key('by-key');
    await entry(byKey, { actor_type: 'api_key', actor_id: byPerson, actor_name: 'by-person' });
    const byOriginal = await key('by-original');
    await entry(byOriginal, { actor_type: 'api_key', actor_id: null, actor_name: 'Original key' });
    const unknown = await key('unknown');

    await keyMakersFromLog.up(db);
    const makers = await db('api_keys').where({ user_id: owner.user_id }).orderBy('id').select('id', 'made_by', 'made_by_name');
    expect(makers.map((k) => [k.id, k.made_by === null ? null : Number(k.made_by), k.made_by_name])).toEqual([
      [byPerson, Number(person.id), String(person.name)],
      [byKey, Number(person.id), String(person.name)],
      [byOriginal, null, 'Original key'],
      [unknown, null, null],
    ]);
  });
});
