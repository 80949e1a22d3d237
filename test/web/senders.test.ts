import { useHarness } from '../support/harness';
import { asFragment, useTwoAccounts } from '../support/web';

describe('dashboard senders', () => {
  const h = useHarness();
  const t = useTwoAccounts(h);
  let place: { country: number; state: number; city: number };

  beforeAll(async () => {
    const { geography } = h.runtime.services;
    const country = (await geography.countries()).find((c) => c.iso2 === 'FR')!;
    for (const state of await geography.states({ countryId: country.id })) {
      const [city] = await geography.cities({ stateId: state.id });
      if (city) {
        place = { country: country.id, state: state.id, city: city.id };
        break;
      }
    }
  });

  const form = (overrides: Record<string, string> = {}) => ({
    nickname: 'Shop',
    from_name: 'The Shop',
    from_email: 'shop@example.com',
    reply_to_email: 'help@example.com',
    company_address: '1 Rue de la Paix',
    zip_code: '75002',
    country_id: String(place.country),
    state_id: String(place.state),
    city_id: String(place.city),
    ...overrides,
  });

  test('when a sender is saved then its link is in the outbox, and following it shows the sender verified', async () => {
    const res = await t.web.post('/senders/new', form()).expect(303);
    expect(res.headers.location).toBe('/senders');
    const list = await t.web.get('/senders').expect(200);
    expect(list.text).toContain('Sender saved. A verification link was mailed to shop@example.com.');
    expect(list.text).toContain('<span class="badge warn">Waiting</span>');

    const outbox = await t.web.get('/outbox').expect(200);
    const message = /<a href="(\/outbox\/[^"]+)">/.exec(outbox.text)?.[1] ?? '';
    const page = await t.web.get(message).expect(200);
    const link = /<a href="(http[^"]+\/verify-sender\/[^"]+)"/.exec(page.text)?.[1] ?? '';
    expect(link).toMatch(/^http:\/\/campaigns\.test\/verify-sender\/[\w-]+$/);
    await t.web.get(new URL(link).pathname).expect(200);

    const after = await t.web.get('/senders').expect(200);
    expect(after.text).toContain('<span class="badge ok">Verified</span>');
    expect(after.text).not.toContain('Resend link');
  });

  test('when the form is incomplete then each message shows next to its field, with the place choices kept', async () => {
    const res = await t.web.post('/senders/new', form({ from_email: 'not-an-email', nickname: '' })).expect(422);
    expect(res.text).toContain('<p class="field-error" id="from_email-error">The from email must be a valid email address.</p>');
    expect(res.text).toContain('<p class="field-error" id="nickname-error">The nickname field is required.</p>');
    expect(res.text).toContain(`<option value="${place.state}" selected>`);
    expect(res.text).toContain(`<option value="${place.city}" selected>`);
  });

  test('when a city does not belong to the state then the service refuses it next to the city field', async () => {
    const res = await t.web.post('/senders/new', form({ city_id: '1' })).expect(422);
    expect(res.text).toContain('<p class="field-error" id="city_id-error">Choose a city from the list.</p>');
  });

  test('when the country changes then the state and city choices are refreshed as a fragment', async () => {
    const res = await t.web.get(`/senders/places?country_id=${place.country}&state_id=${place.state}`).expect(200);
    expect(res.text.trimStart()).toMatch(/^<div id="sender-places" class="field-row">/);
    expect(res.text).toContain(`<option value="${place.state}" selected>`);
    expect(res.text).toContain(`<option value="${place.city}">`);
    const none = await t.web.get('/senders/places').expect(200);
    expect(none.text).toContain('Choose a country first');
  });

  test('when the link is resent then a second message arrives; a verified sender has nothing to resend', async () => {
    await t.web.post('/senders/new', form({ nickname: 'Second', from_email: 'second@example.com' })).expect(303);
    const id = (await h.runtime.services.senders.list({ userId: t.alice.user_id })).rows.find((s) => s.nickname === 'Second')!.id;
    const res = await asFragment(t.web.post(`/senders/${id}/resend`), 'sender-list').expect(200);
    expect(res.text).toContain('A new verification link was mailed to second@example.com.');
    const outbox = await t.web.get('/outbox').expect(200);
    expect(outbox.text.match(/<td>second@example\.com<\/td>/g)).toHaveLength(2);
    const verified = (await h.runtime.services.senders.list({ userId: t.alice.user_id })).rows.find((s) => s.is_verified === 1)!;
    const refused = await asFragment(t.web.post(`/senders/${verified.id}/resend`), 'sender-list').expect(409);
    expect(refused.text).toContain('This sender is already verified; there is no mail to resend.');
  });

  test('when a sender is edited or deleted then the list follows; another account’s sender is a 404', async () => {
    await t.web.post('/senders/new', form({ nickname: 'Edit me', from_email: 'edit@example.com' })).expect(303);
    const id = (await h.runtime.services.senders.list({ userId: t.alice.user_id })).rows.find((s) => s.nickname === 'Edit me')!.id;
    const edit = await t.web.get(`/senders/${id}/edit`).expect(200);
    expect(edit.text).toContain('value="edit@example.com"');
    await t.web.post(`/senders/${id}/edit`, form({ nickname: 'Edited', from_email: 'edit@example.com' })).expect(303);
    expect((await h.runtime.services.senders.get({ userId: t.alice.user_id }, id)).nickname).toBe('Edited');
    const del = await asFragment(t.web.post(`/senders/${id}/delete`), 'sender-list').expect(200);
    expect(del.text).not.toContain('Edited');

    await h.runtime.services.senders.add({ userId: t.bob.user_id }, { ...form(), country_id: place.country, state_id: null, city_id: null, zip_code: null, company_address2: null, nickname: 'Bob sender' } as never);
    const bobs = (await h.runtime.services.senders.list({ userId: t.bob.user_id })).rows[0];
    await t.web.get(`/senders/${bobs.id}/edit`).expect(404);
    await t.web.post(`/senders/${bobs.id}/edit`, form()).expect(404);
    await t.web.post(`/senders/${bobs.id}/resend`).expect(404);
    await t.web.post(`/senders/${bobs.id}/delete`).expect(404);
    expect((await h.runtime.services.senders.get({ userId: t.bob.user_id }, bobs.id)).nickname).toBe('Bob sender');
  });
});
