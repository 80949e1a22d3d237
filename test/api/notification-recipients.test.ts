import { expectBulkIdRules, expectDeleteIdRules, NOT_FOUND, failed } from '../support/expectations';
import { TIMESTAMP, useHarness, TestAccount } from '../support/harness';

describe('notification recipients', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);

  async function notifications(account: TestAccount): Promise<{ id: number; email_address: string; email_owner: string }[]> {
    const res = await h.api(account).get('/notification-recipients').expect(200);
    return res.body.message.notifications;
  }

  async function save(account: TestAccount, email: string, owner: string): Promise<void> {
    await h.api(account).post('/notification-recipient/save').field('email_address', email).field('email_owner', owner).expect(200);
  }

  test('when a recipient is saved then the list shows it newest first', async () => {
    const res = await h.api(alice).post('/notification-recipient/save').field('email_address', 'ops@example.com').field('email_owner', 'Ops Team').expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Added Successfully' });
    await save(alice, 'boss@example.com', 'The Boss');

    const list = await h.api(alice).get('/notification-recipients').expect(200);
    expect(list.body).toEqual({
      status: 'success',
      message: {
        notifications: [
          {
            id: expect.any(Number),
            user_id: alice.user_id,
            email_address: 'boss@example.com',
            email_owner: 'The Boss',
            created_at: expect.stringMatching(TIMESTAMP),
            updated_at: expect.stringMatching(TIMESTAMP),
          },
          expect.objectContaining({ email_address: 'ops@example.com', email_owner: 'Ops Team' }),
        ],
      },
    });
  });

  test('when an address is saved again in another case then its owner is updated in the same row', async () => {
    const carol = await h.account();
    await save(carol, 'Team@Example.com', 'Old name');
    const [before] = await notifications(carol);
    await save(carol, 'team@example.com', 'New name');
    const after = await notifications(carol);
    expect(after).toEqual([{ ...before, email_owner: 'New name', updated_at: expect.stringMatching(TIMESTAMP) }]);
  });

  test('when fields are missing then 422, with the reference’s own sentence for email_owner', async () => {
    const missing = await h.api(alice).post('/notification-recipient/save').field('other', 'x').expect(422);
    expect(missing.body).toEqual(failed({
      email_address: ['The email address field is required.'],
      email_owner: ['The name field is required'],
    }));
  });

  test('when the address is invalid or the owner too long then 422', async () => {
    const bad = await h.api(alice).post('/notification-recipient/save').send({ email_address: 'not an email', email_owner: 'x'.repeat(256) }).expect(422);
    expect(bad.body).toEqual(failed({
      email_address: ['The email address must be a valid email address.'],
      email_owner: ['The email owner may not be greater than 255 characters.'],
    }));
    const list = await h.api(alice).post('/notification-recipient/save').send({ email_address: 'a@example.com,b@example.com', email_owner: 'Two' }).expect(422);
    expect(list.body.errors).toEqual({ email_address: ['The email address must be a valid email address.'] });
  });

  test('when one is deleted then it is gone and deleting again is 404', async () => {
    const dave = await h.account();
    await save(dave, 'keep@example.com', 'Keep');
    await save(dave, 'drop@example.com', 'Drop');
    const [drop, keep] = await notifications(dave);
    const res = await h.api(dave).delete(`/notification-recipient/delete?id=${drop.id}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect(await notifications(dave)).toEqual([keep]);
    await h.api(dave).delete(`/notification-recipient/delete?id=${drop.id}`).expect(404, NOT_FOUND);
    await expectDeleteIdRules(h.api(dave), '/notification-recipient/delete');
  });

  test('when another account addresses a recipient then it is not found and unchanged', async () => {
    const erin = await h.account();
    await save(erin, 'erin@example.com', 'Erin');
    const [row] = await notifications(erin);
    await h.api(bob).delete(`/notification-recipient/delete?id=${row.id}`).expect(404, NOT_FOUND);
    await h.api(bob).post('/notification-recipient/bulk-delete').type('form').send(`strIds[0]=${row.id}`).expect(404, NOT_FOUND);
    expect(await notifications(erin)).toEqual([row]);
    expect(await notifications(bob)).toEqual([]);
  });

  test('when bulk-deleted then only this account’s listed ids go', async () => {
    const frank = await h.account();
    const gina = await h.account();
    for (const n of [1, 2, 3]) await save(frank, `f${n}@example.com`, `F${n}`);
    await save(gina, 'g@example.com', 'G');
    const [f3, f2, f1] = await notifications(frank);
    const [g] = await notifications(gina);
    const res = await h.api(frank).post('/notification-recipient/bulk-delete').type('form').send(`strIds[0]=${f1.id}&strIds[1]=${f3.id}&strIds[2]=${g.id}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect(await notifications(frank)).toEqual([f2]);
    expect(await notifications(gina)).toEqual([g]);
  });

  test('when bulk-delete ids are missing, not integers or too many then 422', async () => {
    await expectBulkIdRules(h.api(alice), '/notification-recipient/bulk-delete');
  });

  test('when a new account is made as the CLI and the first start make it then its owner is its notification recipient, and a bare account has none', async () => {
    const { services } = h.runtime;
    const made = await services.accounts.create({ email: `starter.${process.pid}@example.com`, name: 'Stella', starter: true });
    expect((await services.notificationRecipients.addresses({ userId: made.user_id })).map((r) => [r.email_address, r.email_owner])).toEqual([[`starter.${process.pid}@example.com`, 'Stella']]);
    const bare = await services.accounts.create({ email: `bare.${process.pid}@example.com` });
    expect(await services.notificationRecipients.addresses({ userId: bare.user_id })).toEqual([]);
  });
});
