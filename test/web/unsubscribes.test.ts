import { useHarness, TestAccount } from '../support/harness';
import { asFragment, signIn, useTwoAccounts } from '../support/web';

describe('dashboard unsubscribe pages', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);


  const groupOf = (account: TestAccount, name = 'Newsletter') =>
    h.runtime.services.unsubscribeGroups.add({ userId: account.user_id }, { group_name: name, description: 'Monthly news', is_display: 1 });

  describe('global unsubscribes', () => {
    test('when addresses are added one per line then the list shows them, de-duplicated, with a message', async () => {
      const res = await t.web.post('/global-unsubscribes', { email_address: 'a@example.com\r\nB@example.com, a@example.com' }).expect(303);
      expect(res.headers.location).toBe('/global-unsubscribes');
      const page = await t.web.get('/global-unsubscribes').expect(200);
      expect(page.text).toContain('2 addresses added.');
      expect(page.text).toContain('<td>a@example.com</td>');
      expect(page.text).toContain('<td>B@example.com</td>');
    });

    test('when an address is invalid then the form says which, next to the field', async () => {
      const res = await t.web.post('/global-unsubscribes', { email_address: 'ok@example.com, <b>nope</b>' }).expect(422);
      expect(res.text).toContain('id="email_address-error"');
      expect(res.text).toContain('&lt;b&gt;nope&lt;/b&gt;');
      expect(res.text).not.toContain('<b>nope</b>');
    });

    test('when rows are deleted through htmx then the list comes back without them, with a message for #flash', async () => {
      await h.runtime.services.globalUnsubscribes.add({ userId: t.alice.user_id }, ['x1@example.com', 'x2@example.com', 'x3@example.com']);
      const { rows } = await h.runtime.services.globalUnsubscribes.list({ userId: t.alice.user_id });
      const idOf = (address: string) => rows.find((r) => r.email_address === address)?.id;
      const form = `_csrf=${t.web.csrf}&ids=${idOf('x1@example.com')}&ids=${idOf('x2@example.com')}`;
      const res = await asFragment(t.web.agent.post('/global-unsubscribes/delete').type('form').send(form), 'global-unsubscribe-list').expect(200);
      expect(res.text.trimStart()).toMatch(/^<div id="global-unsubscribe-list">/);
      expect(res.text).not.toContain('x1@example.com');
      expect(res.text).toContain('x3@example.com');
      expect(res.text).toContain('<hx-partial hx-target="#flash" hx-swap="innerHTML">');
      expect(res.text).toContain('2 addresses removed.');
    });

    test('when nothing is selected or the ids are another account’s then the delete is refused', async () => {
      const none = await asFragment(t.web.post('/global-unsubscribes/delete'), 'global-unsubscribe-list').expect(422);
      expect(none.headers['hx-retarget']).toBe('#flash');
      expect(none.text).toContain('The ids field is required.');
      await h.runtime.services.globalUnsubscribes.add({ userId: t.bob.user_id }, ['bob-only@example.com']);
      const bobs = (await h.runtime.services.globalUnsubscribes.list({ userId: t.bob.user_id })).rows;
      await t.web.post('/global-unsubscribes/delete', { ids: String(bobs[0].id) }).expect(404);
      expect((await h.runtime.services.globalUnsubscribes.list({ userId: t.bob.user_id })).rows).toHaveLength(1);
    });

    test('when the list is longer than a page then it is paged', async () => {
      const carol = await h.account();
      const client = await signIn(h, carol);
      await h.runtime.services.globalUnsubscribes.add({ userId: carol.user_id }, Array.from({ length: 55 }, (_, i) => `p${i}@example.com`));
      const first = await client.get('/global-unsubscribes').expect(200);
      expect(first.text).toContain('1–50 of 55');
      expect(first.text).toContain('href="/global-unsubscribes?page=2" rel="next"');
      const second = await client.get('/global-unsubscribes?page=2').expect(200);
      expect(second.text).toContain('51–55 of 55');
      expect((second.text.match(/<tr>/g) ?? []).length).toBe(6);
    });
  });

  describe('unsubscribe groups', () => {
    test('when a group is created through the form then its page opens with a message', async () => {
      const res = await t.web.post('/unsubscribe-groups/new', { group_name: 'Offers', description: 'Special offers', is_display: '0' }).expect(303);
      const id = Number(/^\/unsubscribe-groups\/(\d+)$/.exec(res.headers.location)?.[1]);
      expect(await h.runtime.services.unsubscribeGroups.get({ userId: t.alice.user_id }, id)).toMatchObject({ group_name: 'Offers', is_display: 0 });
      const page = await t.web.get(res.headers.location).expect(200);
      expect(page.text).toContain('Unsubscribe group created.');
      const list = await t.web.get('/unsubscribe-groups').expect(200);
      expect(list.text).toContain(`<a href="/unsubscribe-groups/${id}">Offers</a>`);
      expect(list.text).toContain('<span class="badge">Hidden</span>');
    });

    test('when the form is empty then every field says what is missing', async () => {
      const res = await t.web.post('/unsubscribe-groups/new', {}).expect(422);
      expect(res.text).toContain('<p class="field-error" id="group_name-error">The group name field is required.</p>');
      expect(res.text).toContain('<p class="field-error" id="description-error">The description field is required.</p>');
    });

    test('when a group is edited then it keeps the new values', async () => {
      const id = await groupOf(t.alice, 'Before');
      const form = await t.web.get(`/unsubscribe-groups/${id}/edit`).expect(200);
      expect(form.text).toContain('value="Before"');
      expect(form.text).toContain('<option value="1" selected>');
      await t.web.post(`/unsubscribe-groups/${id}/edit`, { group_name: 'After', description: 'Changed', is_display: '0' }).expect(303);
      expect(await h.runtime.services.unsubscribeGroups.get({ userId: t.alice.user_id }, id)).toMatchObject({ group_name: 'After', description: 'Changed', is_display: 0 });
    });

    test('when addresses are added to a group and one removed then the group page shows the rest', async () => {
      const id = await groupOf(t.alice, 'Members');
      await t.web.post(`/unsubscribe-groups/${id}/recipients`, { email_address: 'm1@example.com\nm2@example.com' }).expect(303);
      const page = await t.web.get(`/unsubscribe-groups/${id}`).expect(200);
      expect(page.text).toContain('2 addresses added.');
      const { rows } = await h.runtime.services.unsubscribeGroups.listRecipients({ userId: t.alice.user_id }, id);
      const m1 = rows.find((r) => r.email_address === 'm1@example.com')!;
      const res = await asFragment(t.web.post(`/unsubscribe-groups/${id}/recipients/delete`, { ids: String(m1.id) }), 'group-recipient-list').expect(200);
      expect(res.text).not.toContain('m1@example.com');
      expect(res.text).toContain('m2@example.com');
      expect(res.text).toContain('Address removed.');
      const bad = await t.web.post(`/unsubscribe-groups/${id}/recipients`, { email_address: '' }).expect(422);
      expect(bad.text).toContain('The email address field is required.');
      expect(bad.text).toContain('m2@example.com');
    });

    test('when another account’s group is addressed then every page and form answers 404', async () => {
      const id = await groupOf(t.bob, 'Bob group');
      await t.web.get(`/unsubscribe-groups/${id}`).expect(404);
      await t.web.get(`/unsubscribe-groups/${id}/edit`).expect(404);
      await t.web.post(`/unsubscribe-groups/${id}/edit`, { group_name: 'Mine', description: 'x', is_display: '1' }).expect(404);
      await t.web.post(`/unsubscribe-groups/${id}/recipients`, { email_address: 'sneak@example.com' }).expect(404);
      await t.web.post(`/unsubscribe-groups/${id}/recipients/delete`, { ids: '1' }).expect(404);
      expect(await h.runtime.services.unsubscribeGroups.get({ userId: t.bob.user_id }, id)).toMatchObject({ group_name: 'Bob group' });
      expect((await h.runtime.services.unsubscribeGroups.listRecipients({ userId: t.bob.user_id }, id)).rows).toEqual([]);
    });
  });
});
