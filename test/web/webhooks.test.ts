import { createHookDeliverer } from '../../src/workers/hook-deliverer';
import { addContact, addContactType, countryId } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { asFragment, useTwoAccounts } from '../support/web';
import { startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

describe('dashboard webhooks page', () => {
  const h = useHarness({ WEBHOOK_ALLOW_PRIVATE: '1' });
  const t = useTwoAccounts(h);
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(() => receiver.close());

  const form = (fields: Array<[string, string]>) => [['_csrf', t.web.csrf], ...fields].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  const hookOf = async () => (await h.runtime.services.outgoingWebhooks.list({ userId: t.alice.user_id })).rows[0];

  test('when a webhook is added then the secret is shown once on the answering page and never on the webhook’s page', async () => {
    const res = await t.web.agent
      .post('/webhook-endpoints')
      .type('form')
      .send(form([['url', receiver.url], ['description', '<b>CRM</b>'], ['events', 'contact.created']]))
      .expect(200);
    const secret = /value="(whsec_[^"]+)"/.exec(res.text)![1];
    expect(res.text).toContain('shown only this once');
    receiver.secret = secret;
    const hook = await hookOf();
    expect(hook.events).toEqual(['contact.created']);
    const list = await t.web.get('/webhook-endpoints').expect(200);
    expect(list.text).toContain(receiver.url);
    expect(list.text).toContain('&lt;b&gt;CRM&lt;/b&gt;');
    const show = await t.web.get(`/webhook-endpoints/${hook.id}`).expect(200);
    expect(show.text).not.toContain(secret);
    expect(show.text).toContain('Nothing sent yet.');
  });

  test('when the form is wrong then each message is in plain words beside its field', async () => {
    const res = await t.web.agent.post('/webhook-endpoints').type('form').send(form([['url', 'not a url']])).expect(422);
    expect(res.text).toContain('The URL must be a valid URL starting with http:// or https://.');
    expect(res.text).toContain('Choose at least one event.');
  });

  test('when an event was delivered then the log shows its status, answer and attempts, and “Send again” posts it once more', async () => {
    const hook = await hookOf();
    await addContact(h, t.alice, { contact_type_id: await addContactType(h, t.alice, 'Web'), email: 'web@example.org', first_name: 'W', last_name: 'B', country: await countryId(h, 'FR') });
    const deliverer = createHookDeliverer({ db: h.runtime.db, config: { webhookAllowPrivate: true }, logger: h.runtime.logger, secret: h.runtime.secret });
    await deliverer.runOnce();
    expect(receiver.events().map((e) => e.type)).toEqual(['contact.created']);

    const page = await t.web.get(`/webhook-endpoints/${hook.id}`).expect(200);
    expect(page.text).toContain('Delivered');
    expect(page.text).toMatch(/<td class="num">200<\/td>\s*<td class="num">1<\/td>/);
    const [delivery] = (await h.runtime.services.outgoingWebhooks.deliveries({ userId: t.alice.user_id }, hook.id, { page: 1, perPage: 100 })).rows;

    await t.web.postWithoutToken(`/webhook-endpoints/${hook.id}/deliveries/${delivery.id}/replay`).expect(403);
    const replayed = await asFragment(t.web.agent.post(`/webhook-endpoints/${hook.id}/deliveries/${delivery.id}/replay`).type('form').send(form([])), 'webhook-deliveries').expect(200);
    expect(replayed.text).toContain('The event will be sent again in a moment.');
    expect(replayed.text).toContain('Waiting');
    await deliverer.runOnce();
    const events = receiver.events();
    expect(events.map((e) => e.id)).toEqual([delivery.event_id, delivery.event_id]);
    expect(receiver.forged).toBe(0);
  });

  test('when another account’s webhook or delivery is addressed then the page is not found', async () => {
    const hook = await hookOf();
    const [delivery] = (await h.runtime.services.outgoingWebhooks.deliveries({ userId: t.alice.user_id }, hook.id, { page: 1, perPage: 100 })).rows;
    const bobs = await h.runtime.services.outgoingWebhooks.save({ userId: t.bob.user_id }, { url: receiver.url, events: ['import.finished'], description: '' });
    await t.web.get(`/webhook-endpoints/${bobs.id}`).expect(404);
    await t.web.post(`/webhook-endpoints/${bobs.id}/delete`).expect(404);
    await t.web.post(`/webhook-endpoints/${bobs.id}/deliveries/${delivery.id}/replay`).expect(404);
    expect((await h.runtime.services.outgoingWebhooks.list({ userId: t.bob.user_id })).rows).toHaveLength(1);
  });

  test('when the webhook is edited with a new secret then the new secret is shown once; when deleted it is gone', async () => {
    const hook = await hookOf();
    const saved = await t.web.agent
      .post(`/webhook-endpoints/${hook.id}`)
      .type('form')
      .send(form([['url', receiver.url], ['events', 'contact.created'], ['events', 'import.finished'], ['rotate_secret', '1']]))
      .expect(200);
    expect(saved.text).toContain('has a new signing secret');
    expect(/value="(whsec_[^"]+)"/.exec(saved.text)![1]).not.toEqual(receiver.secret);
    expect((await hookOf()).events).toEqual(['contact.created', 'import.finished']);
    const plain = await t.web.agent.post(`/webhook-endpoints/${hook.id}`).type('form').send(form([['url', receiver.url], ['events', 'import.finished']])).expect(303);
    expect(plain.headers.location).toBe(`/webhook-endpoints/${hook.id}`);
    const deleted = await t.web.post(`/webhook-endpoints/${hook.id}/delete`).expect(303);
    expect(deleted.headers.location).toBe('/webhook-endpoints');
    const list = await t.web.get('/webhook-endpoints').expect(200);
    expect(list.text).toContain('Webhook deleted.');
    expect(list.text).toContain('No webhooks yet.');
  });
});
