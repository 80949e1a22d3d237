import request from 'supertest';
import { manualClock, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';

/** The hrefs of a message's HTML, in order, entities decoded. */
function hrefs(html: string): string[] {
  return [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
}

describe('click tracking, honest opens and tracking switches', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const web = () => request(h.runtime.app);
  const setup = useSendingSetup(h, 'Customers');
  const alice = setup.account;
  const sink = useSmtpSink({ emptyBeforeEach: true });

  beforeAll(async () => {
    await f.contact(alice.user_id, setup.type, 'ann@example.org', { first_name: 'Ann' });
    await f.contact(alice.user_id, setup.type, 'ben@example.org', { first_name: 'Ben' });
  });

  async function sendAll(options: { now?: () => Date } = {}): Promise<void> {
    const { worker, close } = testWorker(h, sink.url, options);
    await worker.runOnce().finally(close);
  }
  const mailTo = (address: string) => sink.messages.find((m) => m.to[0] === address)!;
  const details = async (utr: string) => {
    const body = (await h.api(alice).get(`/single-send/details?utr=${utr}`).expect(200)).body.message.singleSend;
    return Array.isArray(body) ? body[0] : body;
  };

  test('when a send has three links then each redirect goes to its own URL, counts unique and total, and a forged n is a 404', async () => {
    const html = [
      '<html><body><p>Hi ((first_name))</p>',
      '<a href="https://shop.example/a?x=1&amp;y=2">A</a>',
      '<a href="https://shop.example/b">B</a>',
      "<a class='big' href='http://blog.example/c'>C</a>",
      '<a href="https://shop.example/b">B again</a>',
      '<a href="mailto:help@shop.example">mail</a> <a href="tel:+491234">call</a> <a href="#top">top</a>',
      '<a data-no-track href="https://private.example/">private</a>',
      '<a href="((unsubscribe_preferences))">preferences</a>',
      '</body></html>',
    ].join('');
    const sendId = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: setup.type }], html });
    await sendAll();
    const send = await f.send(sendId);

    const ann = hrefs(String(mailTo('ann@example.org').parsed.html));
    const ben = hrefs(String(mailTo('ben@example.org').parsed.html));
    const tracked = ann.filter((u) => u.startsWith('http://campaigns.test/c/'));
    expect(tracked).toHaveLength(4);
    // The same URL twice is one link; the other links stay as written.
    expect(new URL(tracked[3]).pathname).toBe(new URL(tracked[1]).pathname);
    expect(ann.slice(4)).toEqual(['mailto:help@shop.example', 'tel:+491234', '#top', 'https://private.example/', expect.stringMatching(/^http:\/\/campaigns\.test\/unsubscribe\//)]);
    // The text part keeps the real addresses.
    expect(mailTo('ann@example.org').parsed.text).toContain('https://shop.example/b');

    const path = (url: string) => new URL(url).pathname;
    const [a1, b1, c1] = tracked.map(path);
    const [a2, b2] = ben.filter((u) => u.startsWith('http://campaigns.test/c/')).map(path);
    expect(a1).not.toBe(a2);

    expect((await web().get(a1).set('User-Agent', CHROME).expect(302)).headers.location).toBe('https://shop.example/a?x=1&y=2');
    expect((await web().get(b1).set('User-Agent', CHROME).expect(302)).headers.location).toBe('https://shop.example/b');
    expect((await web().get(c1).set('User-Agent', CHROME).expect(302)).headers.location).toBe('http://blog.example/c');
    await web().get(a1).set('User-Agent', CHROME).expect(302);
    // The destination never comes from the request.
    expect((await web().get(`${b2}?url=https://evil.example/`).set('User-Agent', CHROME).expect(302)).headers.location).toBe('https://shop.example/b');
    await web().get(a2).set('User-Agent', CHROME).expect(302);

    const token = a1.split('/')[2];
    for (const forged of [`/c/${token}/4`, `/c/${token}/0`, `/c/${token}/-1`, `/c/${token}/x`, `/c/${token}/99999999999`, `/c/${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}/1`, '/c/1.abcdefghijklmnopqrstuv/1']) {
      const res = await web().get(forged).expect(404);
      expect(res.headers.location).toBeUndefined();
    }
    // A link checker's HEAD follows without counting.
    await web().head(c1).expect(302);

    expect(await details(String(send.utr))).toMatchObject({ unique_clicks: 2, total_clicks: 6, unique_opens: 2, total_opens: 2 });
    // Links are stored once per send, with their own counts.
    const links = await h.runtime.db('send_links').where({ single_send_id: sendId }).orderBy('n').select('n', 'url', 'unique_clicks', 'total_clicks');
    expect(links).toEqual([
      { n: 1, url: 'https://shop.example/a?x=1&y=2', unique_clicks: 2, total_clicks: 3 },
      { n: 2, url: 'https://shop.example/b', unique_clicks: 2, total_clicks: 2 },
      { n: 3, url: 'http://blog.example/c', unique_clicks: 1, total_clicks: 1 },
    ]);

    // A click counted Ann's open already: her pixel adds to the total only.
    const pixel = /<img src="([^"]+\.gif)"/.exec(String(mailTo('ann@example.org').parsed.html))![1];
    await web().get(path(pixel)).set('User-Agent', CHROME).expect(200);
    expect(await details(String(send.utr))).toMatchObject({ unique_opens: 2, total_opens: 3, unique_clicks: 2, total_clicks: 6 });
  });

  test('when tracking is off then the message has no pixel and no rewritten links', async () => {
    const html = '<html><body><p>Hi</p><a href="https://shop.example/off">Shop</a></body></html>';
    const body = (extra: Record<string, string>) => ({
      template_id: '1', template_html: html, sender_id: String(setup.sender), unsubscribe_group_id: String(setup.group), single_send_name: 'Quiet',
      subject: 'Quiet', preheader: 'Quiet', 'recipient_id[0]': `contacts_${setup.type}`, schedule_type: '0', ...extra,
    });
    const bad = await h.api(alice).post('/single/send/create').type('form').send(body({ track_opens: 'maybe' })).expect(422);
    expect(bad.body).toEqual({ status: 'failed', errors: { track_opens: ['The track opens field must be true or false.'] } });

    const off = (await h.api(alice).post('/single/send/create').type('form').send(body({ track_opens: '0', track_clicks: '0' })).expect(200)).body.message.utr;
    expect(await details(off)).toMatchObject({ track_opens: 0, track_clicks: 0 });
    await sendAll();
    const quiet = String(mailTo('ann@example.org').parsed.html);
    expect(quiet).not.toContain('/open/');
    expect(quiet).not.toContain('/c/');
    expect(hrefs(quiet)).toEqual(['https://shop.example/off']);

    // The account's settings are the default of a send that does not say.
    await h.runtime.services.accounts.updateSettings(alice.user_id, { name: 'Alice', time_zone: 'UTC', track_opens: '0', track_clicks: '1' });
    sink.messages.splice(0);
    const defaulted = (await h.api(alice).post('/single/send/create').type('form').send(body({})).expect(200)).body.message.utr;
    expect(await details(defaulted)).toMatchObject({ track_opens: 0, track_clicks: 1 });
    await sendAll();
    const clicksOnly = String(mailTo('ann@example.org').parsed.html);
    expect(clicksOnly).not.toContain('/open/');
    expect(hrefs(clicksOnly)).toEqual([expect.stringMatching(/^http:\/\/campaigns\.test\/c\/[\w.-]+\/1$/)]);
    await h.runtime.services.accounts.updateSettings(alice.user_id, { name: 'Alice', time_zone: 'UTC', track_opens: '1', track_clicks: '1' });
  });

  test('when an automation step has a link then its clicks count in the automation and the step keeps its own switches', async () => {
    const automationId = await f.automation(alice.user_id, { type: 'custom', contactType: setup.type, groupId: setup.group, status: 0 });
    const automation = await f.automationRecord(automationId);
    const created = await h.api(alice).post('/automations/schedule/create').type('form').send({
      utr: String(automation.utr), sender_id: String(setup.sender), subject: 'Welcome', waiting_period: '1', waiting_type: 'instantly',
      template_id: '1', preview_img: 'blank.png', template_html: '<html><body><a href="https://shop.example/welcome">Start</a></body></html>', track_opens: '0',
    });
    expect(created.status).toBe(200);
    const schedules = (await h.api(alice).get(`/automations/schedule?utr=${automation.utr}`).expect(200)).body.message.automation_schedules;
    expect(schedules[0]).toMatchObject({ track_opens: 0, track_clicks: 1 });
    await f.setAutomationStatus(automationId, 1);
    await sendAll();

    const mail = String(mailTo('ann@example.org').parsed.html);
    expect(mail).not.toContain('/open/');
    const [link] = hrefs(mail);
    expect((await web().get(new URL(link).pathname).set('User-Agent', CHROME).expect(302)).headers.location).toBe('https://shop.example/welcome');
    await web().get(new URL(link).pathname).set('User-Agent', CHROME).expect(302);
    const record = (await h.api(alice).get(`/automations/details?utr=${automation.utr}`).expect(200)).body.message.automation;
    expect(record).toMatchObject({ total_unique_clicks: 1, total_clicks: 2, total_unique_opens: 1, total_opens: 1 });
  });

  test('when a proxy or scanner fetches the pixel then the open is counted but flagged, and a reader counts as a person', async () => {
    const clock = manualClock();
    const sendId = await f.singleSend(alice.user_id, { senderId: setup.sender, groupId: setup.group, to: [{ contactType: setup.type }], dueAt: clock.now() });
    // Delivered a day before the fetches below (the window right after delivery is in test/unit/automated-opens.test.ts).
    await sendAll({ now: clock.now });
    const pixel = (address: string) => new URL(/<img src="([^"]+\.gif)"/.exec(String(mailTo(address).parsed.html))![1]).pathname;

    // Apple Mail Privacy Protection's bare agent and a security scanner are machines; Gmail's proxy long after delivery is a reader.
    await web().get(pixel('ann@example.org')).set('User-Agent', 'Mozilla/5.0').expect(200);
    await web().get(pixel('ann@example.org')).set('User-Agent', 'Mozilla/5.0 (compatible; Barracuda Sentinel)').expect(200);
    await web().get(pixel('ben@example.org')).set('User-Agent', 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)').expect(200);
    let send = await f.send(sendId);
    expect({ unique: send.unique_opens, total: send.total_opens, people: send.unique_human_opens }).toEqual({ unique: 2, total: 3, people: 1 });

    await web().get(pixel('ann@example.org')).set('User-Agent', CHROME).expect(200);
    send = await f.send(sendId);
    expect({ unique: send.unique_opens, total: send.total_opens, people: send.unique_human_opens }).toEqual({ unique: 2, total: 4, people: 2 });
  });
});
