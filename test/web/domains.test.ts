import { useHarness } from '../support/harness';
import { addContactType, sendingFixtures } from '../support/fixtures';
import { useTwoAccounts } from '../support/web';
import { startDnsServer, TestDnsServer } from '../support/dns';

describe('dashboard sending domains page', () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(() => dns.close());
  const h = useHarness({ DNS_SERVERS: () => dns.address });
  const t = useTwoAccounts(h);
  const f = sendingFixtures(h);

  const form = (fields: Array<[string, string]>) => [['_csrf', t.web.csrf], ...fields].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');

  test('when a domain is added then its page lists each record with copy buttons, and checking it after publishing verifies it', async () => {
    const added = await t.web.agent.post('/domains').type('form').send(form([['domain', 'shop.example']])).expect(303);
    const id = Number(/\/domains\/(\d+)/.exec(String(added.headers.location))![1]);
    const page = await t.web.get(`/domains/${id}`).expect(200);
    expect(page.text).toContain('Waiting for DNS');
    const domain = await h.runtime.services.sendingDomains.get({ userId: t.alice.user_id }, id);
    for (const record of domain.records) {
      expect(page.text).toContain(`value="${record.host}"`);
      expect(page.text).toContain(`value="${record.value}"`);
    }
    expect(page.text.match(/data-copy="record-\d+-(host|value)"/g)).toHaveLength(domain.records.length * 2);
    expect(page.text).not.toContain('PRIVATE KEY');

    for (const record of domain.records) dns.set(record.host, record.type as 'TXT', [record.value]);
    await t.web.agent.post(`/domains/${id}/verify`).type('form').send(form([])).expect(303);
    const verified = await t.web.get(`/domains/${id}`).expect(200);
    expect(verified.text).toContain('Verified: mail from this domain is now signed with its own key.');
    expect((await t.web.get('/domains').expect(200)).text).toMatch(/shop\.example<\/a><\/td>\s*<td><span class="badge ok">Verified/);
  });

  test('when the domain field is wrong then the message is beside it', async () => {
    const res = await t.web.agent.post('/domains').type('form').send(form([['domain', '<b>not a domain</b>']])).expect(422);
    expect(res.text).toContain('The domain must be a domain name such as example.com.');
    expect(res.text).not.toContain('<b>not a domain</b>');
  });

  test("when another account's domain is asked for then it is not found", async () => {
    const bobs = await h.runtime.services.sendingDomains.save({ userId: t.bob.user_id }, { domain: 'bob.example' });
    await t.web.get(`/domains/${bobs.id}`).expect(404);
    await t.web.agent.post(`/domains/${bobs.id}/delete`).type('form').send(form([])).expect(404);
  });

  test("when a draft's sender has no verified domain then the confirm page warns, and not once it is verified", async () => {
    const sender = await f.sender(t.alice.user_id, { from_email: 'news@unset.example' });
    const group = await f.group(t.alice.user_id);
    const readers = await addContactType(h, t.alice, 'Readers');
    await f.contact(t.alice.user_id, readers, 'reader@example.org');
    const sendId = await f.singleSend(t.alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: readers }], status: 0 });
    const utr = (await h.runtime.db('single_sends').where({ id: sendId }).first('utr')).utr;
    const warned = await t.web.get(`/single-sends/${utr}/confirm`).expect(200);
    expect(warned.text).toContain('The domain of news@unset.example is not set up for sending');
    const domain = await h.runtime.services.sendingDomains.save({ userId: t.alice.user_id }, { domain: 'unset.example' });
    await h.runtime.db('sending_domains').where({ id: domain.id }).update({ status: 'verified' });
    const fine = await t.web.get(`/single-sends/${utr}/confirm`).expect(200);
    expect(fine.text).not.toContain('is not set up for sending');
  });
});
