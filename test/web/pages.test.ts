import { createDashboard } from '../../src/web';
import { useHarness, TestAccount } from '../support/harness';
import { asBoosted, asFragment, PASSWORD, setCookie, signIn, useTwoAccounts } from '../support/web';

describe('dashboard pages', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);


  const addType = async (account: TestAccount, name: string) => h.runtime.services.contactTypes.add({ userId: account.user_id }, { name });

  describe('rendering', () => {
    test('when a page is asked for normally then it is a whole document that varies on HX-Request and is not cached', async () => {
      const res = await t.web.get('/contact-types').expect(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.text).toMatch(/^<!doctype html>/);
      expect(res.text).toContain('<title>Contact types · Campaigns</title>');
      expect(res.text).toContain(`<meta name="csrf-token" content="${t.web.csrf}">`);
      expect(res.text).toContain('<body hx-boost:inherited="true">');
      expect(res.headers.vary).toContain('HX-Request');
      expect(res.headers['cache-control']).toBe('no-store');
    });

    test('when htmx boosts a link then only the body comes back, with its title', async () => {
      const res = await asBoosted(t.web.get('/contact-types')).expect(200);
      expect(res.text).not.toContain('<!doctype');
      expect(res.text).not.toContain('<head>');
      expect(res.text.trimStart()).toMatch(/^<title>Contact types · Campaigns<\/title>/);
      expect(res.text).toContain('<nav class="sidebar"');
    });

    test('when htmx asks for one swap target then only its macro comes back', async () => {
      await addType(t.alice, 'Fragmented');
      const res = await asFragment(t.web.get('/contact-types'), 'contact-type-list').expect(200);
      expect(res.text.trimStart()).toMatch(/^<div id="contact-type-list">/);
      expect(res.text).toContain('Fragmented');
      expect(res.text).not.toContain('<nav');
    });

    test('when the assets are asked for then htmx comes from the app, versioned and cacheable for long', async () => {
      const page = await t.web.get('/').expect(200);
      const htmx = /<script src="(\/vendor\/htmx-4\.[\d.]+\/htmx\.min\.js)" defer>/.exec(page.text)?.[1] ?? '';
      const res = await t.web.get(htmx).expect(200);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.text).toContain('htmx');
      const css = /<link rel="stylesheet" href="(\/assets\/app\.css\?v=\w+)">/.exec(page.text)?.[1] ?? '';
      await t.web.get(css).expect(200).expect('content-type', /text\/css/);
    });

    test('when a path does not exist then the 404 page answers', async () => {
      const res = await t.web.get('/no-such-page').expect(404);
      expect(res.text).toContain('There is no page at this address.');
    });
  });

  describe('CSRF', () => {
    test('when any state-changing route gets no token or a wrong one then it is refused with a 403 page and changes nothing', async () => {
      const { stateChanging } = createDashboard(h.runtime.config, h.runtime.services, h.runtime.logger);
      const id = await addType(t.alice, 'Protected');
      expect(stateChanging).toEqual(expect.arrayContaining(['/login', '/logout', '/contact-types/new', '/contact-types/:id/delete']));
      for (const path of stateChanging) {
        const url = path.replace(':id', String(id));
        const missing = await t.web.postWithoutToken(url, { name: 'Changed' });
        expect([url, missing.status]).toEqual([url, 403]);
        expect(missing.text).toContain('This form has expired or did not come from this site.');
        const forged = await t.web.agent.post(url).set({ 'X-CSRF-Token': 'forged', 'HX-Request': 'true' }).type('form').send({ name: 'Changed' });
        expect([url, forged.status]).toEqual([url, 403]);
      }
      expect((await h.runtime.services.contactTypes.get({ userId: t.alice.user_id }, id)).name).toBe('Protected');
      await t.web.get('/').expect(200);
    });

    test('when htmx sends the token as a header then the post is accepted', async () => {
      const id = await addType(t.alice, 'Header token');
      await t.web.agent.post(`/contact-types/${id}/delete`).set({ 'X-CSRF-Token': t.web.csrf }).expect(303);
    });
  });

  describe('home', () => {
    test('when the home page is shown then it counts the account’s own records only', async () => {
      const carol = await h.account();
      await addType(carol, 'One');
      await addType(carol, 'Two');
      await addType(t.bob, 'Not mine');
      const res = await (await signIn(h, carol)).get('/').expect(200);
      expect(res.text).toMatch(/Contact types<\/a><\/p>\s*<p class="stat-value">2<\/p>/);
      expect(res.text).toContain(`Welcome, ${carol.email.split('@')[0]}`);
    });

    test('when the home page is shown then every count links to its page and the checklist ticks what is done, importing contacts included', async () => {
      const dora = await h.account();
      const checklist = (html: string) => [...html.matchAll(/<li class="(done|todo)">[\s\S]*?<a href="([^"]+)"/g)].map((m) => `${m[1]} ${m[2]}`);
      const fresh = await (await signIn(h, dora)).get('/').expect(200);
      expect(checklist(fresh.text)).toEqual(['todo /contact-types/new', 'todo /contacts/import', 'todo /senders/new', 'todo /single-sends/new', 'todo /single-sends']);
      const tiles = [...fresh.text.matchAll(/<p class="stat-label">(.*?)<\/p>/g)].map((m) => m[1]);
      expect(tiles).toHaveLength(8);
      for (const tile of tiles) expect(tile).toMatch(/^<a href="\/[a-z-]+">[^<]+<\/a>$/);

      const type = await addType(dora, 'Readers');
      await h.api(dora).post('/contacts/add').send({ contact_type_id: type, email: 'reader@example.org', country: 1 }).expect(200);
      const later = await (await signIn(h, dora)).get('/').expect(200);
      expect(checklist(later.text)).toEqual(['done /contact-types/new', 'done /contacts/import', 'todo /senders/new', 'todo /single-sends/new', 'todo /single-sends']);
      expect(later.text).toContain('<span class="visually-hidden">Done: </span><a href="/contacts/import">Import your contacts</a>');
    });
  });

  describe('contact types', () => {
    test('when a type is added through the form then the list shows it with a message', async () => {
      const res = await t.web.post('/contact-types/new', { name: 'Partners' }).expect(303);
      expect(res.headers.location).toBe('/contact-types');
      const list = await t.web.get('/contact-types').expect(200);
      expect(list.text).toContain('Contact type added.');
      expect(list.text).toMatch(/<a href="\/contact-types\/\d+\/edit">Partners<\/a>/);
      const again = await t.web.get('/contact-types').expect(200);
      expect(again.text).not.toContain('Contact type added.');
    });

    test('when a name is too short then the form comes back (422) with the message next to the field and the value kept', async () => {
      const res = await t.web.post('/contact-types/new', { name: 'x' }).expect(422);
      expect(res.text).toMatch(/<input id="field-name" name="name" type="text" value="x" required aria-invalid="true" aria-describedby="name-error">/);
      expect(res.text).toContain('<p class="field-error" id="name-error">The name must be at least 2 characters.</p>');
      const boosted = await asBoosted(t.web.post('/contact-types/new', { name: 'x' })).expect(422);
      expect(boosted.headers['hx-push-url']).toBe('false');
      const missing = await t.web.post('/contact-types/new', {}).expect(422);
      expect(missing.text).toContain('The name field is required.');
    });

    test('when a name the account already has is entered then the form comes back (422) saying so', async () => {
      await addType(t.alice, 'Twice');
      const res = await t.web.post('/contact-types/new', { name: 'twice' }).expect(422);
      expect(res.text).toContain('<p class="field-error" id="name-error">The name has already been taken.</p>');
      const id = await addType(t.alice, 'Once');
      const edit = await t.web.post(`/contact-types/${id}/edit`, { name: 'Twice' }).expect(422);
      expect(edit.text).toContain('<p class="field-error" id="name-error">The name has already been taken.</p>');
      const names = (await h.runtime.services.contactTypes.list({ userId: t.alice.user_id })).rows.map((r) => r.name);
      expect(names.filter((n) => n.toLowerCase() === 'twice')).toEqual(['Twice']);
    });

    test('when a name holds markup then every page shows it escaped', async () => {
      const name = '<script>alert("x")</script>';
      await t.web.post('/contact-types/new', { name }).expect(303);
      const list = await t.web.get('/contact-types').expect(200);
      expect(list.text).not.toContain(name);
      expect(list.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
      const id = Number(/<a href="\/contact-types\/(\d+)\/edit">&lt;script&gt;/.exec(list.text)?.[1]);
      const edit = await t.web.get(`/contact-types/${id}/edit`).expect(200);
      expect(edit.text).not.toContain(name);
      expect(edit.text).toContain('value="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"');
      expect(edit.text).toContain('<title>Edit &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; · Campaigns</title>');
    });

    test('when a type is renamed then the list shows the new name', async () => {
      const id = await addType(t.alice, 'Old name');
      const form = await t.web.get(`/contact-types/${id}/edit`).expect(200);
      expect(form.text).toContain('value="Old name"');
      await t.web.post(`/contact-types/${id}/edit`, { name: 'New name' }).expect(303);
      expect((await h.runtime.services.contactTypes.get({ userId: t.alice.user_id }, id)).name).toBe('New name');
      const bad = await t.web.post(`/contact-types/${id}/edit`, { name: '' }).expect(422);
      expect(bad.text).toContain('The name field is required.');
      expect(bad.text).toContain(`action="/contact-types/${id}/edit"`);
    });

    test('when htmx deletes a type then the list comes back without it; a plain form redirects', async () => {
      const id = await addType(t.alice, 'Doomed');
      const res = await asFragment(t.web.post(`/contact-types/${id}/delete`), 'contact-type-list').expect(200);
      expect(res.text.trimStart()).toMatch(/^<div id="contact-type-list">/);
      expect(res.text).not.toContain('Doomed');
      const other = await addType(t.alice, 'Doomed too');
      const plain = await t.web.post(`/contact-types/${other}/delete`).expect(303);
      expect(plain.headers.location).toBe('/contact-types');
      await t.web.get(`/contact-types/${other}/edit`).expect(404);
    });

    test('when another account’s type is addressed then every route answers 404 and nothing changes', async () => {
      const id = await addType(t.bob, 'Bob only');
      const page = await t.web.get(`/contact-types/${id}/edit`).expect(404);
      expect(page.text).toContain('This record does not exist, or it belongs to another account.');
      await t.web.post(`/contact-types/${id}/edit`, { name: 'Taken' }).expect(404);
      await t.web.post(`/contact-types/${id}/delete`).expect(404);
      await t.web.get('/contact-types/abc/edit').expect(404);
      // An in-page action that fails says so in the flash area instead of inside the list.
      const swap = await asFragment(t.web.post(`/contact-types/${id}/delete`), 'contact-type-list').expect(404);
      expect(swap.headers['hx-retarget']).toBe('#flash');
      expect(swap.text).toContain('class="flash flash-error"');
      expect((await h.runtime.services.contactTypes.get({ userId: t.bob.user_id }, id)).name).toBe('Bob only');
    });
  });

  describe('API keys', () => {
    test('when the page is shown then the public key is there and no secret', async () => {
      const res = await t.web.get('/api-keys').expect(200);
      expect(res.text).toContain(`<code class="key" id="public-key">${t.alice.public_key}</code>`);
      expect(res.text).not.toContain('sk_');
    });

    test('when the secret is rotated with htmx then the new one comes back once, and only the new one works', async () => {
      const account = await h.account();
      const client = await signIn(h, account);
      const res = await asFragment(client.post('/api-keys/rotate'), 'secret-key').expect(200);
      const secret = /<code class="key" id="new-secret-key">(sk_[\w-]+)<\/code>/.exec(res.text)?.[1] ?? '';
      expect(res.text.trimStart()).toMatch(/^<div id="secret-key">/);
      await h.api({ ...account, headers: { PublicKey: account.public_key, SecretKey: secret } }).get('/contacts-type').expect(200);
      await h.api(account).get('/contacts-type').expect(401);
      const page = await client.get('/api-keys').expect(200);
      expect(page.text).not.toContain(secret);
      expect((await client.get('/api-keys/rotate').expect(303)).headers.location).toBe('/api-keys');
    });
  });

  describe('settings', () => {
    test('when the name and time zone are saved then the account keeps them and dates show in that zone', async () => {
      const account = await h.account();
      const client = await signIn(h, account);
      await client.post('/settings', { name: 'Shop', time_zone: 'Asia/Tokyo' }).expect(303);
      expect(await h.runtime.services.accounts.get(account.user_id)).toMatchObject({ name: 'Shop', time_zone: 'Asia/Tokyo' });
      const page = await client.get('/settings').expect(200);
      expect(page.text).toContain('Settings saved.');
      expect(page.text).toContain('<option value="Asia/Tokyo" selected>Asia/Tokyo (UTC+09:00)</option>');

      const created = new Date();
      await h.runtime.services.contactTypes.add({ userId: account.user_id }, { name: 'Zoned' });
      const list = await client.get('/contact-types').expect(200);
      const tokyo = new Date(created.getTime() + 9 * 3600_000).toISOString().slice(0, 10);
      expect(list.text).toContain(`<td>${tokyo} `);
    });

    test('when tracking is switched off in the settings then new sends default to it and the composer shows it', async () => {
      const account = await h.account();
      const client = await signIn(h, account);
      const refused = await client.post('/settings', { name: 'Shop', time_zone: 'UTC', track_opens: 'sometimes', track_clicks: '0' }).expect(422);
      expect(refused.text).toContain('The track opens field must be true or false.');
      await client.post('/settings', { name: 'Shop', time_zone: 'UTC', track_opens: '0', track_clicks: '0' }).expect(303);
      expect(await h.runtime.services.accounts.get(account.user_id)).toMatchObject({ track_opens: 0, track_clicks: 0 });
      const composer = await client.get('/single-sends/new').expect(200);
      expect(composer.text).toMatch(/<select id="field-track_opens" name="track_opens">\s*<option value="1">On<\/option>\s*<option value="0" selected>Off<\/option>/);
    });

    test('when a current zone name or an old alias is chosen then it is accepted and kept under its current name', async () => {
      const account = await h.account();
      const client = await signIn(h, account);
      const zone = async () => (await h.runtime.services.accounts.get(account.user_id))?.time_zone;
      for (const current of ['Asia/Kolkata', 'Europe/Kyiv', 'Asia/Ho_Chi_Minh', 'America/Ciudad_Juarez', 'Pacific/Kanton', 'UTC']) {
        await client.post('/settings', { name: 'Shop', time_zone: current }).expect(303);
        expect(await zone()).toBe(current);
      }
      for (const [alias, current] of [['Asia/Calcutta', 'Asia/Kolkata'], ['Europe/Kiev', 'Europe/Kyiv'], ['Asia/Saigon', 'Asia/Ho_Chi_Minh'], ['US/Eastern', 'America/New_York'], ['Etc/UTC', 'UTC']]) {
        await client.post('/settings', { name: 'Shop', time_zone: alias }).expect(303);
        expect(await zone()).toBe(current);
      }
    });

    test('when the settings page shows the picker then it lists current names with their offset, and a stored alias as its current name', async () => {
      const account = await h.account();
      await h.runtime.db('accounts').where({ id: account.user_id }).update({ time_zone: 'Asia/Calcutta' });
      const page = await (await signIn(h, account)).get('/settings').expect(200);
      expect(page.text).toContain('<option value="Asia/Kolkata" selected>Asia/Kolkata (UTC+05:30)</option>');
      expect(page.text).toContain('<option value="Asia/Ho_Chi_Minh">Asia/Ho_Chi_Minh (UTC+07:00)</option>');
      expect(page.text).toMatch(/<option value="Europe\/Kyiv">Europe\/Kyiv \(UTC\+0[23]:00\)<\/option>/);
      expect(page.text).toMatch(/<select id="field-time_zone" name="time_zone" required>\s*<option value="UTC">UTC \(UTC\+00:00\)<\/option>/);
      expect(page.text).not.toContain('value="Asia/Calcutta"');
      expect(page.text).not.toContain('value="Europe/Kiev"');
    });

    test('when the password is changed then the old one and the other sessions stop working, and this browser stays in', async () => {
      const account = await h.account();
      const client = await signIn(h, account);
      const other = await signIn(h, account);
      const res = await client.post('/settings/password', { current_password: PASSWORD, password: 'a much longer secret', password_confirmation: 'a much longer secret' }).expect(303);
      expect(setCookie(res, 'cc_session')).toMatch(/^cc_session=[\w-]{43}; Max-Age=1209600;/);
      const page = await client.get('/settings').expect(200);
      expect(page.text).toContain('Password changed. Other browsers were signed out.');
      await other.get('/settings').expect(303);
      expect(await h.runtime.services.teamUsers.signIn(account.email, PASSWORD)).toBeUndefined();
      expect(await h.runtime.services.teamUsers.signIn(account.email, 'a much longer secret')).toMatchObject({ user_id: account.user_id, role: 'owner' });
    });

    test('when the current password is wrong or the new one short or mistyped then each message shows by its field', async () => {
      const wrong = await t.web.post('/settings/password', { current_password: 'nope', password: 'a much longer secret', password_confirmation: 'a much longer secret' }).expect(422);
      expect(wrong.text).toContain('<p class="field-error" id="current_password-error">The current password is incorrect.</p>');
      expect(wrong.text).toContain(`value="${t.alice.email.split('@')[0]}"`);
      const short = await t.web.post('/settings/password', { current_password: PASSWORD, password: 'short', password_confirmation: 'short' }).expect(422);
      expect(short.text).toContain('<p class="field-error" id="password-error">The password must be at least 10 characters.</p>');
      const typo = await t.web.post('/settings/password', { current_password: PASSWORD, password: 'a much longer secret', password_confirmation: 'a much longer secreT' }).expect(422);
      expect(typo.text).toContain('<p class="field-error" id="password_confirmation-error">The password confirmation does not match.</p>');
      expect(typo.text).not.toContain('a much longer secret');
      expect(await h.runtime.services.teamUsers.signIn(t.alice.email, PASSWORD)).toMatchObject({ user_id: t.alice.user_id });
    });

    test('when the time zone is unknown or the name blank then the form says so next to each field', async () => {
      const res = await t.web.post('/settings', { name: ' ', time_zone: 'Mars/Olympus' }).expect(422);
      expect(res.text).toContain('<p class="field-error" id="name-error">The name field is required.</p>');
      expect(res.text).toContain('<p class="field-error" id="time_zone-error">The selected time zone is invalid.</p>');
      expect((await h.runtime.services.accounts.get(t.alice.user_id))?.time_zone).toBe('UTC');
    });
  });
});
