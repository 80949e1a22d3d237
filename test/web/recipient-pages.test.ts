import request from 'supertest';
import { useHarness } from '../support/harness';
import { addContactType, header, sendingFixtures, testWorker } from '../support/fixtures';
import { ReceivedMessage, useSmtpSink } from '../support/smtp';

describe('recipient pages: open pixel, preference page, one-click unsubscribe', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const [alice] = h.accounts(1);
  const sink = useSmtpSink();
  let sendId: number;
  let news: number;
  let offers: number;
  let hidden: number;
  const web = () => request(h.runtime.app);

  /** The path of a link in a received message, e.g. `/unsubscribe/<token>`. */
  const unsubscribePath = (m: ReceivedMessage) => new URL(/^<([^>]+)>/.exec(header(m.raw, 'List-Unsubscribe')!)![1]).pathname;
  const pixelPath = (m: ReceivedMessage) => new URL(/<img src="([^"]+\.gif)"/.exec(String(m.parsed.html))![1]).pathname;
  const mailTo = (address: string) => sink.messages.find((m) => m.to[0] === address)!;
  const counters = async () => {
    const s = await f.send(sendId);
    return { unique_opens: s.unique_opens, total_opens: s.total_opens, unsubscribes: s.unsubscribes };
  };
  const groupMembers = (groupId: number) =>
    h.runtime.db('unsubscribe_group_recipients').where({ unsubscribe_groups_id: groupId }).orderBy('email_key').pluck('email_key');

  beforeAll(async () => {
    const sender = await f.sender(alice.user_id);
    news = await f.group(alice.user_id, 'News', 1);
    offers = await f.group(alice.user_id, 'Offers', 1);
    hidden = await f.group(alice.user_id, 'Internal', 0);
    const type = await addContactType(h, alice, 'Readers');
    for (const who of ['ann', 'ben', 'cat', 'dan']) await f.contact(alice.user_id, type, `${who}@example.org`);
    sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: news, to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    expect(sink.messages).toHaveLength(4);
  });

  test('when the pixel is loaded then the GIF comes back and opens are counted, unique once per message', async () => {
    const ann = pixelPath(mailTo('ann@example.org'));
    const first = await web().get(ann).expect(200);
    expect(first.headers['content-type']).toBe('image/gif');
    expect(first.headers['cache-control']).toContain('no-store');
    expect(first.body.subarray(0, 6).toString()).toBe('GIF89a');
    await web().get(ann).expect(200);
    expect(await counters()).toEqual({ unique_opens: 1, total_opens: 2, unsubscribes: 0 });

    await web().get(pixelPath(mailTo('ben@example.org'))).expect(200);
    expect(await counters()).toEqual({ unique_opens: 2, total_opens: 3, unsubscribes: 0 });
    const tokens = await h.runtime.services.tracking.uniqueOpenTokens([sendId]);
    expect(tokens.get(sendId)).toEqual({ '1': ann.slice('/open/'.length, -4), '2': pixelPath(mailTo('ben@example.org')).slice(6, -4) });
  });

  test('when a token is forged or edited then every page is a 404 and nothing is recorded', async () => {
    const good = unsubscribePath(mailTo('cat@example.org')).split('/')[2];
    const [id, mac] = good.split('.');
    const edited = `${id}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    const otherId = `${(parseInt(id, 36) + 1).toString(36)}.${mac}`;
    const before = await counters();
    for (const token of [edited, otherId, 'nonsense', '1.AAAAAAAAAAAAAAAAAAAAAA']) {
      await web().get(`/open/${token}.gif`).expect(404);
      await web().get(`/unsubscribe/${token}`).expect(404);
      await web().post(`/unsubscribe/${token}`).type('form').send({ 'List-Unsubscribe': 'One-Click' }).expect(404);
      await web().post(`/unsubscribe/${token}`).type('form').send({ form: 'preferences', unsubscribe_all: '1' }).expect(404);
    }
    expect(await counters()).toEqual(before);
    expect(await groupMembers(news)).toEqual([]);
    expect(Number((await h.runtime.db('global_unsubscribes').where({ user_id: alice.user_id }).count({ n: '*' }).first())?.n)).toBe(0);
  });

  test('when the preference page is opened then it lists the shown groups and a global opt-out and changes nothing', async () => {
    const res = await web().get(unsubscribePath(mailTo('cat@example.org'))).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('cat@example.org');
    expect(res.text).toContain(`name="groups" value="${news}" checked`);
    expect(res.text).toContain(`name="groups" value="${offers}" checked`);
    expect(res.text).not.toContain(`value="${hidden}"`);
    expect(res.text).toContain('Unsubscribe from all emails');
    expect(res.text).not.toContain('name="unsubscribe_all" value="1" checked');
    expect(await groupMembers(news)).toEqual([]);
    expect((await counters()).unsubscribes).toBe(0);
  });

  test('when the preference form is posted then the choice takes effect at once and counts once', async () => {
    const path = unsubscribePath(mailTo('cat@example.org'));
    const saved = await web().post(path).type('form').send(`form=preferences&groups=${offers}`).expect(200);
    expect(saved.text).toContain('Your preferences have been saved.');
    expect(saved.text).toContain(`name="groups" value="${news}">`);
    expect(saved.text).toContain(`name="groups" value="${offers}" checked`);
    expect(await groupMembers(news)).toEqual(['cat@example.org']);
    expect(await groupMembers(offers)).toEqual([]);
    expect((await counters()).unsubscribes).toBe(1);

    // Everything off, then back on: the same message counts once; global opt-out is undone.
    await web().post(path).type('form').send('form=preferences&unsubscribe_all=1').expect(200);
    expect(await groupMembers(offers)).toEqual(['cat@example.org']);
    expect(await h.runtime.db('global_unsubscribes').where({ user_id: alice.user_id }).pluck('email_key')).toEqual(['cat@example.org']);
    await web().post(path).type('form').send(`form=preferences&groups=${news}&groups=${offers}`).expect(200);
    expect(await groupMembers(news)).toEqual([]);
    expect(await h.runtime.db('global_unsubscribes').where({ user_id: alice.user_id }).pluck('email_key')).toEqual([]);
    expect((await counters()).unsubscribes).toBe(1);
  });

  test('when the one-click URL is posted (urlencoded or multipart) then the address leaves the group with a 200 and no redirect', async () => {
    const dan = await web().post(unsubscribePath(mailTo('dan@example.org'))).type('form').send('List-Unsubscribe=One-Click').expect(200);
    expect(dan.headers.location).toBeUndefined();
    expect(dan.headers['set-cookie']).toBeUndefined();
    expect(dan.text).toContain('You have been unsubscribed');
    await web().post(unsubscribePath(mailTo('ben@example.org'))).field('List-Unsubscribe', 'One-Click').expect(200);
    await web().post(unsubscribePath(mailTo('ben@example.org'))).field('List-Unsubscribe', 'One-Click').expect(200);
    expect(await groupMembers(news)).toEqual(['ben@example.org', 'dan@example.org']);
    expect((await counters()).unsubscribes).toBe(3);
  });
});
