import { expectBulkIdRules, expectDeleteIdRules, NOT_FOUND } from '../support/expectations';
import { TIMESTAMP, useHarness, TestAccount } from '../support/harness';

describe('global unsubscribes', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);

  async function unsubscribers(account: TestAccount): Promise<{ id: number; email_address: string }[]> {
    const res = await h.api(account).get('/global-unsubscribes').expect(200);
    return res.body.message.unSubscribers;
  }

  async function save(account: TestAccount, list: string): Promise<void> {
    await h.api(account).post('/global-unsubscribes/save').field('email_address', list).expect(200);
  }

  test('when addresses are saved then the list shows them newest first, trimmed and de-duplicated', async () => {
    const res = await h.api(alice).post('/global-unsubscribes/save').field('email_address', 'first@example.com , Second@Example.com, second@example.com,').expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Added Successfully' });

    const list = await h.api(alice).get('/global-unsubscribes').expect(200);
    expect(list.body).toEqual({
      status: 'success',
      message: {
        unSubscribers: [
          {
            id: expect.any(Number),
            user_id: alice.user_id,
            unsubscribe_groups_id: null,
            email_address: 'Second@Example.com',
            created_at: expect.stringMatching(TIMESTAMP),
            updated_at: expect.stringMatching(TIMESTAMP),
          },
          expect.objectContaining({ email_address: 'first@example.com', unsubscribe_groups_id: null }),
        ],
      },
    });
  });

  test('when an address is saved again in any case then one row stays and it succeeds', async () => {
    const carol = await h.account();
    await save(carol, 'again@example.com');
    const [before] = await unsubscribers(carol);
    await save(carol, 'AGAIN@example.com, new@example.com');
    const after = await unsubscribers(carol);
    expect(after.map((u) => u.email_address)).toEqual(['new@example.com', 'again@example.com']);
    expect(after[1]).toEqual(before);
  });

  test('when two accounts unsubscribe one address then each keeps its own row', async () => {
    await save(alice, 'both@example.com');
    await save(bob, 'both@example.com');
    expect((await unsubscribers(bob)).map((u) => u.email_address)).toEqual(['both@example.com']);
    expect((await unsubscribers(alice)).map((u) => u.email_address)).toContain('both@example.com');
  });

  test('when the address list is missing, invalid or too long then 422 and nothing is saved', async () => {
    const dave = await h.account();
    const missing = await h.api(dave).post('/global-unsubscribes/save').field('other', 'x').expect(422);
    expect(missing.body).toEqual({ status: 'failed', errors: { email_address: ['The email address field is required.'] } });
    const invalid = await h.api(dave).post('/global-unsubscribes/save').send({ email_address: 'good@example.com, bad' }).expect(422);
    expect(invalid.body).toEqual({ status: 'failed', errors: { email_address: ['The email address must contain valid email addresses only; invalid: bad.'] } });
    const list = Array.from({ length: 1001 }, (_, i) => `u${i}@example.com`).join(',');
    const tooMany = await h.api(dave).post('/global-unsubscribes/save').send({ email_address: list }).expect(422);
    expect(tooMany.body.errors).toEqual({ email_address: ['The email address may not have more than 1000 addresses.'] });
    expect(await unsubscribers(dave)).toEqual([]);
  });

  test('when one is deleted then it is gone and deleting again is 404', async () => {
    const erin = await h.account();
    await save(erin, 'keep@example.com, drop@example.com');
    const [drop, keep] = await unsubscribers(erin);
    const res = await h.api(erin).delete(`/global-unsubscribes/delete?id=${drop.id}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect(await unsubscribers(erin)).toEqual([keep]);
    await h.api(erin).delete(`/global-unsubscribes/delete?id=${drop.id}`).expect(404, NOT_FOUND);
    await expectDeleteIdRules(h.api(erin), '/global-unsubscribes/delete');
  });

  test('when another account deletes an id then it is not found and the row stays', async () => {
    const frank = await h.account();
    await save(frank, 'frank@example.com');
    const [row] = await unsubscribers(frank);
    await h.api(bob).delete(`/global-unsubscribes/delete?id=${row.id}`).expect(404, NOT_FOUND);
    await h.api(bob).post('/global-unsubscribes/bulk-delete').type('form').send(`strIds[0]=${row.id}`).expect(404, NOT_FOUND);
    expect(await unsubscribers(frank)).toEqual([row]);
  });

  test('when bulk-deleted then only this account’s listed ids go', async () => {
    const gina = await h.account();
    await save(gina, 'a@example.com, b@example.com, c@example.com');
    await save(bob, 'bob-bulk@example.com');
    const [c, b, a] = await unsubscribers(gina);
    const bobs = (await unsubscribers(bob)).find((u) => u.email_address === 'bob-bulk@example.com')!;
    const res = await h.api(gina).post('/global-unsubscribes/bulk-delete').type('form').send(`strIds[0]=${a.id}&strIds[1]=${c.id}&strIds[2]=${bobs.id}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect(await unsubscribers(gina)).toEqual([b]);
    expect((await unsubscribers(bob)).map((u) => u.id)).toContain(bobs.id);
  });

  test('when bulk-delete ids are missing, not integers or too many then 422', async () => {
    await expectBulkIdRules(h.api(alice), '/global-unsubscribes/bulk-delete');
  });
});
