import { expectBulkIdRules, expectDeleteIdRules, NOT_FOUND, failed } from '../support/expectations';
import { TIMESTAMP, useHarness, TestAccount } from '../support/harness';

describe('unsubscribe groups', () => {
  const h = useHarness();
  const [alice, bob] = h.accounts(2);

  async function addGroup(account: TestAccount, name: string, isDisplay = '1'): Promise<number> {
    await h.api(account).post('/unsubscribes-groups/save').field('group_name', name).field('description', `About ${name}`).field('is_display', isDisplay).expect(200);
    const list = await h.api(account).get('/unsubscribes-groups').expect(200);
    return list.body.message.unsubscribesGroups.find((g: { group_name: string }) => g.group_name === name).id;
  }

  async function recipients(account: TestAccount, groupId: number): Promise<{ id: number; email_address: string }[]> {
    const res = await h.api(account).get(`/unsubscribes-groups/recipients-list?groupId=${groupId}`).expect(200);
    return res.body.message.recipients;
  }

  test('when a group is saved then the list shows it newest first with unsubscribe_clients_count', async () => {
    const save = await h.api(alice).post('/unsubscribes-groups/save').field('group_name', 'Weekly').field('description', 'Weekly digest').field('is_display', '1').expect(200);
    expect(save.body).toEqual({ status: 'success', message: 'Saved Successfully' });
    await h.api(alice).post('/unsubscribes-groups/save').send({ group_name: 'Offers', description: 'Special offers', is_display: false }).expect(200);

    const res = await h.api(alice).get('/unsubscribes-groups').expect(200);
    expect(res.body.status).toBe('success');
    const [first, second] = res.body.message.unsubscribesGroups;
    expect(first).toEqual({
      id: expect.any(Number),
      user_id: alice.user_id,
      rand_id: expect.stringMatching(/^[\w-]{6,16}$/),
      group_name: 'Offers',
      description: 'Special offers',
      is_display: 0,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
      unsubscribe_clients_count: 0,
    });
    expect(second).toMatchObject({ group_name: 'Weekly', is_display: 1 });
    expect(second.rand_id).not.toBe(first.rand_id);
  });

  test('when save misses or spoils fields then 422 reports every field at once', async () => {
    const missing = await h.api(alice).post('/unsubscribes-groups/save').field('other', 'x').expect(422);
    expect(missing.body).toEqual(failed({
      group_name: ['The group name field is required.'],
      description: ['The description field is required.'],
      is_display: ['The is display field is required.'],
    }));
    const bad = await h.api(alice).post('/unsubscribes-groups/save').field('group_name', 'x'.repeat(256)).field('description', 'd').field('is_display', 'maybe').expect(422);
    expect(bad.body.errors).toEqual({
      group_name: ['The group name may not be greater than 255 characters.'],
      is_display: ['The is display field must be true or false.'],
    });
  });

  test('when details are asked then the group comes without unsubscribe_clients_count', async () => {
    const id = await addGroup(alice, 'Detailed');
    const res = await h.api(alice).get(`/unsubscribes-groups/details?id=${id}`).expect(200);
    expect(res.body).toEqual({
      status: 'success',
      message: {
        unsubscribesGroup: {
          id,
          user_id: alice.user_id,
          rand_id: expect.any(String),
          group_name: 'Detailed',
          description: 'About Detailed',
          is_display: 1,
          created_at: expect.stringMatching(TIMESTAMP),
          updated_at: expect.stringMatching(TIMESTAMP),
        },
      },
    });
    await h.api(alice).get('/unsubscribes-groups/details?id=999999').expect(404, NOT_FOUND);
    const missing = await h.api(alice).get('/unsubscribes-groups/details').expect(422);
    expect(missing.body).toEqual({ status: 'failed', errors: { id: ['The id field is required.'] } });
    const bad = await h.api(alice).get('/unsubscribes-groups/details?id=abc').expect(422);
    expect(bad.body.errors).toEqual({ id: ['The id must be an integer.'] });
  });

  test('when updated then the fields change; missing ones are reported together', async () => {
    const id = await addGroup(alice, 'Before');
    const res = await h.api(alice).post(`/unsubscribes-groups/update?id=${id}`).field('group_name', 'After').field('description', 'New text').field('is_display', '0').expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Updated Successfully' });
    const view = await h.api(alice).get(`/unsubscribes-groups/details?id=${id}`).expect(200);
    expect(view.body.message.unsubscribesGroup).toMatchObject({ group_name: 'After', description: 'New text', is_display: 0 });

    const bad = await h.api(alice).post('/unsubscribes-groups/update').type('form').send({ is_display: '1' }).expect(422);
    expect(bad.body.errors).toEqual({
      id: ['The id field is required.'],
      group_name: ['The group name field is required.'],
      description: ['The description field is required.'],
    });
    await h.api(alice).post('/unsubscribes-groups/update?id=999999').field('group_name', 'x').field('description', 'y').field('is_display', '1').expect(404, NOT_FOUND);
  });

  test('when addresses are added by hand then they are trimmed, de-duplicated and counted', async () => {
    const id = await addGroup(alice, 'Manual');
    const res = await h.api(alice)
      .post('/unsubscribes-groups/manually-add')
      .field('unsubscribe_groups_id', String(id))
      .field('email_address', ' one@example.com, Two@Example.com ,two@example.com,, three@example.com ')
      .expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Added Successfully' });

    const list = await recipients(alice, id);
    expect(list.map((r) => r.email_address)).toEqual(['three@example.com', 'Two@Example.com', 'one@example.com']);
    expect(list[0]).toEqual({
      id: expect.any(Number),
      user_id: alice.user_id,
      unsubscribe_groups_id: id,
      email_address: 'three@example.com',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });

    // Adding an address already in the group keeps one row and succeeds.
    await h.api(alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: id, email_address: 'ONE@example.com, four@example.com' }).expect(200);
    expect((await recipients(alice, id)).map((r) => r.email_address).sort()).toEqual(['Two@Example.com', 'four@example.com', 'one@example.com', 'three@example.com'].sort());

    const groups = await h.api(alice).get('/unsubscribes-groups').expect(200);
    expect(groups.body.message.unsubscribesGroups.find((g: { id: number }) => g.id === id).unsubscribe_clients_count).toBe(4);
  });

  test('when the same address is in two groups then each group keeps its own row', async () => {
    const a = await addGroup(alice, 'Group A');
    const b = await addGroup(alice, 'Group B');
    for (const id of [a, b]) {
      await h.api(alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: id, email_address: 'shared@example.com' }).expect(200);
    }
    expect((await recipients(alice, a)).map((r) => r.email_address)).toEqual(['shared@example.com']);
    expect((await recipients(alice, b)).map((r) => r.email_address)).toEqual(['shared@example.com']);
  });

  test('when manually-add gets missing, invalid or too many addresses then 422 and nothing is added', async () => {
    const id = await addGroup(alice, 'Strict');
    const missing = await h.api(alice).post('/unsubscribes-groups/manually-add').field('other', 'x').expect(422);
    expect(missing.body).toEqual(failed({
      unsubscribe_groups_id: ['The unsubscribe groups id field is required.'],
      email_address: ['The email address field is required.'],
    }));
    const blank = await h.api(alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: id, email_address: ' , ,' }).expect(422);
    expect(blank.body.errors).toEqual({ email_address: ['The email address field is required.'] });

    const invalid = await h.api(alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: id, email_address: 'ok@example.com, not-an-email, x@y' }).expect(422);
    expect(invalid.body.errors).toEqual({ email_address: ['The email address must contain valid email addresses only; invalid: not-an-email, x@y.'] });

    const many = Array.from({ length: 1001 }, (_, i) => `user${i}@example.com`).join(',');
    const tooMany = await h.api(alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: id, email_address: many }).expect(422);
    expect(tooMany.body.errors).toEqual({ email_address: ['The email address may not have more than 1000 addresses.'] });
    expect(await recipients(alice, id)).toEqual([]);

    const notInteger = await h.api(alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: 'abc', email_address: 'a@example.com' }).expect(422);
    expect(notInteger.body.errors).toEqual({ unsubscribe_groups_id: ['The unsubscribe groups id must be an integer.'] });
  });

  test('when exactly 1000 addresses are added then all are kept', async () => {
    const id = await addGroup(alice, 'Thousand');
    const list = Array.from({ length: 1000 }, (_, i) => `bulk${i}@example.com`).join(', ');
    await h.api(alice).post('/unsubscribes-groups/manually-add').type('form').send({ unsubscribe_groups_id: id, email_address: list }).expect(200);
    const res = await h.api(alice).get(`/unsubscribes-groups/recipients-list?groupId=${id}&page=1&per_page=1`).expect(200);
    expect(res.body.message.pagination).toEqual({ page: 1, per_page: 1, total: 1000 });
  });

  test('when a recipient is deleted then it is gone and a second delete is 404', async () => {
    const id = await addGroup(alice, 'Deleting');
    await h.api(alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: id, email_address: 'a@example.com,b@example.com' }).expect(200);
    const [b, a] = await recipients(alice, id);
    const res = await h.api(alice).delete(`/unsubscribes-groups/recipients-delete?id=${a.id}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect(await recipients(alice, id)).toEqual([b]);
    await h.api(alice).delete(`/unsubscribes-groups/recipients-delete?id=${a.id}`).expect(404, NOT_FOUND);
    await expectDeleteIdRules(h.api(alice), '/unsubscribes-groups/recipients-delete');
  });

  test('when recipients are bulk-deleted then only this account’s listed ids go', async () => {
    const mine = await addGroup(alice, 'Bulk mine');
    const theirs = await addGroup(bob, 'Bulk theirs');
    await h.api(alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: mine, email_address: 'a@example.com,b@example.com,c@example.com' }).expect(200);
    await h.api(bob).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: theirs, email_address: 'bob@example.com' }).expect(200);
    const [c, b, a] = await recipients(alice, mine);
    const [bobs] = await recipients(bob, theirs);

    const res = await h.api(alice)
      .post('/unsubscribes-groups/recipients-bulk-delete')
      .type('form')
      .send(`strIds[0]=${a.id}&strIds[1]=${b.id}&strIds[2]=${bobs.id}`)
      .expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    expect(await recipients(alice, mine)).toEqual([c]);
    expect(await recipients(bob, theirs)).toEqual([bobs]);

    await h.api(alice).post('/unsubscribes-groups/recipients-bulk-delete').type('form').send(`strIds[0]=${bobs.id}`).expect(404, NOT_FOUND);
  });

  test('when bulk-delete ids are missing, not integers or too many then 422', async () => {
    await expectBulkIdRules(h.api(alice), '/unsubscribes-groups/recipients-bulk-delete');
  });

  test('when another account addresses a group then it is not found and unchanged', async () => {
    const id = await addGroup(alice, 'Private');
    await h.api(alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: id, email_address: 'private@example.com' }).expect(200);
    const [recipient] = await recipients(alice, id);

    await h.api(bob).get(`/unsubscribes-groups/details?id=${id}`).expect(404, NOT_FOUND);
    await h.api(bob).post(`/unsubscribes-groups/update?id=${id}`).field('group_name', 'Stolen').field('description', 'x').field('is_display', '1').expect(404, NOT_FOUND);
    await h.api(bob).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: id, email_address: 'intruder@example.com' }).expect(404, NOT_FOUND);
    await h.api(bob).get(`/unsubscribes-groups/recipients-list?groupId=${id}`).expect(404, NOT_FOUND);
    await h.api(bob).delete(`/unsubscribes-groups/recipients-delete?id=${recipient.id}`).expect(404, NOT_FOUND);

    const bobsGroups = await h.api(bob).get('/unsubscribes-groups').expect(200);
    expect(bobsGroups.body.message.unsubscribesGroups.map((g: { id: number }) => g.id)).not.toContain(id);
    const view = await h.api(alice).get(`/unsubscribes-groups/details?id=${id}`).expect(200);
    expect(view.body.message.unsubscribesGroup.group_name).toBe('Private');
    expect(await recipients(alice, id)).toEqual([recipient]);
  });

  test('when recipients-list lacks groupId or names no group then 422 or 404', async () => {
    const missing = await h.api(alice).get('/unsubscribes-groups/recipients-list').expect(422);
    expect(missing.body).toEqual({ status: 'failed', errors: { groupId: ['The groupId field is required.'] } });
    await h.api(alice).get('/unsubscribes-groups/recipients-list?groupId=999999').expect(404, NOT_FOUND);
  });

  test('when another service checks a group id then only this account’s groups exist', async () => {
    const id = await addGroup(alice, 'Checked');
    const { unsubscribeGroups } = h.runtime.services;
    await expect(unsubscribeGroups.exists({ userId: alice.user_id }, id)).resolves.toBe(true);
    await expect(unsubscribeGroups.exists({ userId: bob.user_id }, id)).resolves.toBe(false);
    await expect(unsubscribeGroups.exists({ userId: alice.user_id }, 999999)).resolves.toBe(false);
  });
});
