import request from 'supertest';
import { addContactType, manualClock, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

/** Editing an automation step: `POST /automations/schedule/update?utr=`. */
describe('editing an automation step', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h);
  const alice = setup.account;
  const sink = useSmtpSink();

  const stepUtr = async (id: number) => String((await h.runtime.db('automation_schedules').where({ id }).first('utr')).utr);
  const params = (subject: string, html: string) => ({ sender_id: setup.sender, subject, waiting_period: 1, waiting_type: 'instantly', template_id: 1, preview_img: 'blank.png', template_html: html });
  const links = (html: string) => [...html.matchAll(/href="([^"]+\/c\/[^"]+)"/g)].map((m) => new URL(m[1]).pathname);
  const target = async (path: string) => (await request(h.runtime.app).get(path).expect(302)).headers.location;

  /**
   * A live welcome automation of a new contact type with one instant step of `html`; `linksTo`
   * reads the links of the message an address got after this point.
   */
  async function liveStep(typeName: string, subject: string, html: string) {
    const type = await addContactType(h, alice, typeName);
    const automation = await f.automation(alice.user_id, { type: 'welcome', contactType: type, groupId: setup.group });
    const step = await f.schedule(alice.user_id, automation, { senderId: setup.sender, subject, waitingPeriod: 1, waitingType: 'instantly', html });
    await f.setAutomationStatus(automation, 1);
    const already = sink.messages.length;
    const linksTo = (address: string) => links(String(sink.messages.slice(already).find((m) => m.to[0] === address)!.parsed.html));
    return { type, automation, step, already, linksTo };
  }

  test('when a live step is edited then the next message has the new content, and the links of mail already sent still lead where they did', async () => {
    const clock = manualClock(new Date(Date.now() + 86_400_000));
    const type = await addContactType(h, alice, 'Readers');
    const automation = await f.automation(alice.user_id, { type: 'welcome', contactType: type, groupId: setup.group });
    const step = await f.schedule(alice.user_id, automation, {
      senderId: setup.sender, subject: 'Welcome ((first_name))', waitingPeriod: 1, waitingType: 'instantly',
      html: '<html><body><p>Hi ((first_name))</p><a href="https://shop.example/a">A</a></body></html>',
    });
    await f.setAutomationStatus(automation, 1);
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      await worker.runOnce();
      await f.contact(alice.user_id, type, 'first@example.org', { first_name: 'Fay' });
      clock.advance(60_000);
      await worker.runOnce();
      const [before] = await sink.waitFor(1);
      expect(before.parsed.subject).toBe('Welcome Fay');

      const edited = await h.api(alice)
        .post(`/automations/schedule/update?utr=${await stepUtr(step)}`)
        .send(params('Hello again ((first_name))', '<html><body><a href="https://shop.example/b">B</a> <a href="https://shop.example/a">A</a></body></html>'))
        .expect(200);
      expect(edited.body).toEqual({ status: 'success', message: 'Schedule Updated' });

      // The same worker, which compiled the step before the edit.
      await f.contact(alice.user_id, type, 'second@example.org', { first_name: 'Sam' });
      clock.advance(60_000);
      await worker.runOnce();
      const after = (await sink.waitFor(2)).find((m) => m.to[0] === 'second@example.org')!;
      expect(after.parsed.subject).toBe('Hello again Sam');
      const [toB, toA] = links(String(after.parsed.html));
      expect(await target(toB)).toBe('https://shop.example/b');
      expect(await target(toA)).toBe('https://shop.example/a');
      const [old] = links(String(before.parsed.html));
      expect(await target(old)).toBe('https://shop.example/a');
    } finally {
      await close();
    }
    const listed = await h.api(alice).get(`/automations/schedule?utr=${String((await h.runtime.db('automations').where({ id: automation }).first('utr')).utr)}`).expect(200);
    expect(listed.body.message.automation_schedules).toEqual([expect.objectContaining({ subject: 'Hello again ((first_name))', template_html: expect.stringContaining('shop.example/b') })]);
  });

  test('when a step\'s only link is replaced then each message\'s link leads to the URL that message carried, from the worker that compiled the old content and from a fresh one', async () => {
    const clock = manualClock(new Date(Date.now() + 2 * 86_400_000));
    const { type, automation, step, already, linksTo } = await liveStep('Replaced', 'Offer ((first_name))', '<html><body><a href="https://shop.example/old">Old offer</a></body></html>');
    const first = testWorker(h, sink.url, { now: clock.now });
    const fresh = testWorker(h, sink.url, { now: clock.now });
    try {
      await first.worker.runOnce();
      await f.contact(alice.user_id, type, 'one@example.org', { first_name: 'One' });
      clock.advance(60_000);
      await first.worker.runOnce();
      await sink.waitFor(already + 1);

      await h.api(alice)
        .post(`/automations/schedule/update?utr=${await stepUtr(step)}`)
        .send(params('Offer ((first_name))', '<html><body><a href="https://shop.example/new">New offer</a></body></html>'))
        .expect(200);

      // The worker that compiled the old content mails two; one that never saw it mails three.
      await f.contact(alice.user_id, type, 'two@example.org', { first_name: 'Two' });
      clock.advance(60_000);
      await first.worker.runOnce();
      await sink.waitFor(already + 2);
      await f.contact(alice.user_id, type, 'three@example.org', { first_name: 'Three' });
      clock.advance(60_000);
      await fresh.worker.runOnce();
      await sink.waitFor(already + 3);
      const [one] = linksTo('one@example.org');
      const [two] = linksTo('two@example.org');
      const [three] = linksTo('three@example.org');

      expect(await target(one)).toBe('https://shop.example/old');
      expect(await target(two)).toBe('https://shop.example/new');
      expect(await target(three)).toBe('https://shop.example/new');
      // The automation's report counts each click on the link its message carried.
      const report = await h.runtime.services.engagement.links({ userId: alice.user_id }, { automationId: automation });
      expect(report).toEqual([
        { url: 'https://shop.example/old', unique_clicks: 1, total_clicks: 1 },
        { url: 'https://shop.example/new', unique_clicks: 2, total_clicks: 2 },
      ]);
    } finally {
      await first.close();
      await fresh.close();
    }
  });

  test('when a step\'s links are edited between two messages then each message\'s link numbers resolve only to the links of the content it was sent with', async () => {
    const clock = manualClock(new Date(Date.now() + 3 * 86_400_000));
    const { type, automation, step, already, linksTo } = await liveStep('Versions', 'Links ((first_name))', '<html><body><a href="https://shop.example/v1-a">A</a> <a href="https://shop.example/v1-b">B</a></body></html>');
    const click = (path: string) => request(h.runtime.app).get(path);
    const numbered = (path: string, n: number) => path.replace(/\/\d+$/, `/${n}`);
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    try {
      await worker.runOnce();
      await f.contact(alice.user_id, type, 'old@example.org', { first_name: 'Old' });
      clock.advance(60_000);
      await worker.runOnce();
      await sink.waitFor(already + 1);

      await h.api(alice)
        .post(`/automations/schedule/update?utr=${await stepUtr(step)}`)
        .send(params('Links ((first_name))', '<html><body><a href="https://shop.example/v2-c">C</a></body></html>'))
        .expect(200);
      await f.contact(alice.user_id, type, 'new@example.org', { first_name: 'New' });
      clock.advance(60_000);
      await worker.runOnce();
      await sink.waitFor(already + 2);

      const old = linksTo('old@example.org');
      const [fresh] = linksTo('new@example.org');
      expect((await click(old[0]).expect(302)).headers.location).toBe('https://shop.example/v1-a');
      expect((await click(old[1]).expect(302)).headers.location).toBe('https://shop.example/v1-b');
      expect((await click(fresh).expect(302)).headers.location).toBe('https://shop.example/v2-c');
      // The same numbers on the other message name links it never carried.
      const freshNumber = Number(fresh.split('/').pop());
      await click(numbered(old[0], freshNumber)).expect(404);
      for (const path of old) await click(numbered(fresh, Number(path.split('/').pop()))).expect(404);

      const report = await h.runtime.services.engagement.links({ userId: alice.user_id }, { automationId: automation });
      expect(report).toEqual([
        { url: 'https://shop.example/v1-a', unique_clicks: 1, total_clicks: 1 },
        { url: 'https://shop.example/v1-b', unique_clicks: 1, total_clicks: 1 },
        { url: 'https://shop.example/v2-c', unique_clicks: 1, total_clicks: 1 },
      ]);
    } finally {
      await close();
    }
  });

  test('when the step is unknown, another account\'s, or the parameters are invalid then 404 or 422 and nothing changes', async () => {
    const type = await addContactType(h, alice, 'Others');
    const automation = await f.automation(alice.user_id, { type: 'welcome', contactType: type, groupId: setup.group });
    const step = await f.schedule(alice.user_id, automation, { senderId: setup.sender, subject: 'Kept', waitingPeriod: 1, waitingType: 'instantly' });
    const utr = await stepUtr(step);
    const bob = await h.account();
    await h.api(bob).post(`/automations/schedule/update?utr=${utr}`).send(params('Taken', '<p>x</p>')).expect(404);
    await h.api(alice).post('/automations/schedule/update?utr=00000000-0000-4000-8000-000000000000').send(params('Nobody', '<p>x</p>')).expect(404);
    const invalid = await h.api(alice).post(`/automations/schedule/update?utr=${utr}`).send({ ...params('', '<p>x</p>'), waiting_type: 'weeks' }).expect(422);
    expect(invalid.body).toEqual({
      status: 'failed',
      errors: { subject: ['The subject field is required.'], waiting_type: ['The selected waiting type is invalid.'] },
    });
    const missing = await h.api(alice).post('/automations/schedule/update').send(params('No utr', '<p>x</p>')).expect(422);
    expect(missing.body.errors).toEqual({ utr: ['The utr field is required.'] });
    expect((await h.runtime.db('automation_schedules').where({ id: step }).first('subject')).subject).toBe('Kept');
  });
});
