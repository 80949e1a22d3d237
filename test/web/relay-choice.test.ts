import { markRelayDown } from '../../src/services/delivery/relays';
import { addContact, addVerifiedSender, berlin } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useTwoAccounts } from '../support/web';

describe('dashboard: choosing the relay of a send or an automation step', () => {
  const h = useHarness({ RELAY_ALLOW_PRIVATE: '1' });
  const t = useTwoAccounts(h);
  const refs = { sender: 0, group: 0, type: 0, template: 0, office: 0, backup: 0 };
  const ctx = () => ({ userId: t.alice.user_id });

  beforeAll(async () => {
    const { services } = h.runtime;
    const place = await berlin(h);
    refs.sender = await addVerifiedSender(h, t.alice, place, { nickname: 'News', from_email: 'news@acme.example' });
    refs.group = await services.unsubscribeGroups.add(ctx(), { group_name: 'Newsletter', description: 'News', is_display: 1 });
    refs.type = await services.contactTypes.add(ctx(), { name: 'Customers' });
    refs.template = (await services.designTemplates.list()).rows.find((r) => r.is_blank === 0)!.id;
    await addContact(h, t.alice, { contact_type_id: refs.type, email: 'ann@example.org', country: place.countryId });
  });

  const relay = (name: string, priority: number, domains: string[]) =>
    h.runtime.services.relays.save(ctx(), { name, kind: 'smtp', url: 'smtp://127.0.0.1:2525', api_key: null, region: null, endpoint: null, max_rate: 0, priority, domains });
  const sendForm = (overrides: Record<string, string> = {}) => ({
    single_send_name: 'November news', subject: 'Hello', preheader: 'What is new', sender_id: String(refs.sender), unsubscribe_group_id: String(refs.group),
    template_id: String(refs.template), template_html: '<p>Hi</p>', recipient_id: `contacts_${refs.type}`, schedule_type: '1', schedule_date: '2031-01-15', schedule_time: '09:30',
    ...overrides,
  });
  const sentThrough = (html: string) => /<dt>Sent through<\/dt>\s*<dd>([^<]*)<\/dd>/.exec(html)?.[1].trim();

  test('when the account has no relay then the forms offer no choice and the confirm step says the service’s own server', async () => {
    expect((await t.web.get('/single-sends/new').expect(200)).text).not.toContain('Send through');
    const res = await t.web.post('/single-sends/new', sendForm()).expect(303);
    const utr = res.headers.location.split('/').pop()!;
    const confirm = await t.web.get(`/single-sends/${utr}/confirm?when=schedule`).expect(200);
    expect(sentThrough(confirm.text)).toBe('the service’s own mail server');
  });

  test('when the account has relays then a send can name one, and the confirm step says which relay its mail goes through', async () => {
    refs.office = (await relay('Office <Postfix>', 2, ['acme.example'])).id;
    refs.backup = (await relay('Backup', 1, [])).id;
    const composer = await t.web.get('/single-sends/new').expect(200);
    expect(composer.text).toContain('<label for="field-relay_id">Send through</label>');
    expect(composer.text).toContain(`<option value="${refs.office}">Office &lt;Postfix&gt; — SMTP server`);
    expect(composer.text).toContain('<option value="" selected>The usual choice');

    const res = await t.web.post('/single-sends/new', sendForm({ relay_id: String(refs.backup) })).expect(303);
    const utr = res.headers.location.split('/').pop()!;
    expect((await h.runtime.services.singleSends.get(ctx(), utr)).relay_id).toBe(refs.backup);
    expect((await t.web.get(`/single-sends/${utr}/edit`).expect(200)).text).toContain(`<option value="${refs.backup}" selected>Backup`);
    expect(sentThrough((await t.web.get(`/single-sends/${utr}/confirm?when=schedule`).expect(200)).text)).toBe('the relay “Backup”');

    // Back to the usual choice: the highest-priority relay serving the sender's domain, then the next while it is down.
    await t.web.post(`/single-sends/${utr}/edit`, sendForm({ relay_id: '' })).expect(303);
    expect((await h.runtime.services.singleSends.get(ctx(), utr)).relay_id).toBeNull();
    expect(sentThrough((await t.web.get(`/single-sends/${utr}/confirm?when=schedule`).expect(200)).text)).toBe('the relay “Office &lt;Postfix&gt;”');
    await markRelayDown(h.runtime.db, refs.office, 'connect ECONNREFUSED');
    expect(sentThrough((await t.web.get(`/single-sends/${utr}/confirm?when=schedule`).expect(200)).text)).toBe('the relay “Backup”');
    await markRelayDown(h.runtime.db, refs.backup, 'connect ECONNREFUSED');
    expect(sentThrough((await t.web.get(`/single-sends/${utr}/confirm?when=schedule`).expect(200)).text)).toMatch(/^the relay “Office &lt;Postfix&gt;”, which is down now/);

    // Another account's relay is not a choice.
    const bobs = await h.runtime.services.relays.save({ userId: t.bob.user_id }, { name: 'Bob’s', kind: 'smtp', url: 'smtp://127.0.0.1:2525', api_key: null, region: null, endpoint: null, max_rate: 0, priority: 0, domains: [] });
    const refused = await t.web.post(`/single-sends/${utr}/edit`, sendForm({ relay_id: String(bobs.id) })).expect(422);
    expect(refused.text).toContain('<p class="field-error" id="relay_id-error">Choose a relay from the list.</p>');
    expect(refused.text).not.toContain('Bob’s');
  });

  test('when an automation step is added or edited then it can name a relay, and its page shows the one chosen', async () => {
    const created = await t.web.post('/automations/new', { type: 'welcome', automation_name: 'Onboarding', automation_for: `contacts_${refs.type}`, unsubscribe_group_id: '' }).expect(303);
    const utr = created.headers.location.split('/').pop()!;
    const show = await t.web.get(`/automations/${utr}`).expect(200);
    expect(show.text).toContain('<label for="field-relay_id">Send through</label>');
    const step = { utr, subject: 'Welcome', sender_id: String(refs.sender), template_id: String(refs.template), waiting_type: 'days', waiting_period: '1' };
    await t.web.post(`/automations/${utr}/steps`, { ...step, relay_id: String(refs.office) }).expect(303);
    const [saved] = await h.runtime.services.automationSchedules.list(ctx(), utr);
    expect(saved.relay_id).toBe(refs.office);

    const page = await t.web.get(`/automations/${utr}/steps/${saved.utr}`).expect(200);
    expect(page.text).toContain(`<option value="${refs.office}" selected>Office &lt;Postfix&gt;`);
    await t.web.post(`/automations/${utr}/steps/${saved.utr}`, { ...step, relay_id: String(refs.backup) }).expect(303);
    expect((await h.runtime.services.automationSchedules.list(ctx(), utr))[0].relay_id).toBe(refs.backup);
  });
});
