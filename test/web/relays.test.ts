import { markRelayDown } from '../../src/services/delivery/relays';
import { relaySettings } from '../../src/services/delivery/relays/relays';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { signIn, useTwoAccounts } from '../support/web';

describe('dashboard relays page', () => {
  const relay = useSmtpSink();
  const h = useHarness({ RELAY_ALLOW_PRIVATE: '1' });
  const t = useTwoAccounts(h);

  const form = (fields: Array<[string, string]>) => [['_csrf', t.web.csrf], ...fields].map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  const relayOf = async () => (await h.runtime.services.relays.list({ userId: t.alice.user_id })).rows.find((r) => r.name.includes('Office'))!;

  test('when a relay is added then the list shows it working, with its rate and domains, and never its password', async () => {
    const sink = new URL(relay.url);
    const parts: Array<[string, string]> = [['smtp_host', sink.hostname], ['smtp_port', sink.port], ['smtp_security', 'starttls'], ['smtp_user', 'mail@er'], ['smtp_password', 'pa55:w/rd@']];
    await t.web.agent
      .post('/relays')
      .type('form')
      .send(form([['name', '<b>Office</b> Postfix'], ['kind', 'smtp'], ...parts, ['max_rate', '5'], ['priority', '2'], ['domains', 'acme.test, news.acme.test']]))
      .expect(303);
    // The dashboard composes the API's url from the parts; the password is sealed apart (with its odd characters whole).
    const saved = await relayOf();
    expect(saved.url).toBe(`smtp://mail%40er@${sink.hostname}:${sink.port}`);
    const settings = relaySettings(await h.runtime.db('relays').where({ id: saved.id }).first(), h.runtime.secret);
    expect(decodeURIComponent(new URL(String(settings.url)).password)).toBe('pa55:w/rd@');
    const page = await t.web.get('/relays').expect(200);
    expect(page.text).toContain(`${sink.hostname}, port ${sink.port}, user mail@er`);
    expect(page.text).not.toContain('smtp://');
    expect(page.text).toContain('&lt;b&gt;Office&lt;/b&gt; Postfix');
    expect(page.text).toContain('Working');
    expect(page.text).toContain('up to 5 a second');
    expect(page.text).toContain('0 sent in the last hour');
    expect(page.text).toContain('acme.test, news.acme.test');
    expect(page.text).not.toContain('pa55word');
    expect((await (await signIn(h, t.bob)).get('/relays').expect(200)).text).not.toContain('Office');
  });

  test('when a relay failed then the page says it is not working, until when, and its last error', async () => {
    const saved = await relayOf();
    await markRelayDown(h.runtime.db, saved.id, '421 4.3.2 <Service> shutting down');
    const page = await t.web.get('/relays').expect(200);
    expect(page.text).toContain('Not working');
    expect(page.text).toContain('tried again');
    expect(page.text).toContain('421 4.3.2 &lt;Service&gt; shutting down');
  });

  test('when “Test” is pressed then the relay is connected to and the answer says so; without the form token it is refused', async () => {
    const saved = await relayOf();
    await t.web.postWithoutToken(`/relays/${saved.id}/test`).expect(403);
    const res = await t.web.agent.post(`/relays/${saved.id}/test`).type('form').send(form([])).expect(303);
    // The sink offers no login: the relay's password is refused, and the page says so in the server's words.
    expect((await t.web.agent.get(res.headers.location).expect(200)).text).toContain('The relay could not be used: 535');

    const open = await h.runtime.services.relays.save({ userId: t.alice.user_id }, { name: 'Open', kind: 'smtp', url: relay.url, api_key: null, region: null, endpoint: null, max_rate: 0, priority: 0, domains: [] });
    const ok = await t.web.agent.post(`/relays/${open.id}/test`).type('form').send(form([])).expect(303);
    expect((await t.web.agent.get(ok.headers.location).expect(200)).text).toContain('The relay connected and accepted the login. Nothing was sent.');
    expect(relay.messages).toHaveLength(0);
  });

  test('when the form is wrong then each message is beside its field', async () => {
    const res = await t.web.agent.post('/relays').type('form').send(form([['kind', 'smtp'], ['smtp_host', 'smtp://x:1/'], ['smtp_port', '99999'], ['smtp_password', 'secret-typed'], ['domains', 'not a domain!']])).expect(422);
    expect(res.text).toContain('The name field is required.');
    expect(res.text).toContain('Enter only the server’s name, for example smtp.example.com: no smtp://, port or slash.');
    expect(res.text).toContain('Enter a port between 1 and 65535, for example 587.');
    expect(res.text).toContain('Each of the domains must be a domain name, such as example.com.');
    // The password typed is not sent back in the page.
    expect(res.text).not.toContain('secret-typed');
    const empty = await t.web.agent.post('/relays').type('form').send(form([['name', 'X'], ['kind', 'smtp']])).expect(422);
    expect(empty.text).toContain('Enter the server’s name, for example smtp.example.com.');
    // A server the service refuses is said beside the server's field, in its words.
    const unknown = await t.web.agent.post('/relays').type('form').send(form([['name', 'X'], ['kind', 'smtp'], ['smtp_host', 'no-such-host.invalid']])).expect(422);
    expect(unknown.text).toContain('This server could not be found.');
    expect(unknown.text).not.toMatch(/The (url|URL)\b/);
  });
});
