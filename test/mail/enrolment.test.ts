import { addContact, addContactType, countryId, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

/**
 * Who a welcome automation reaches, through the API as a client drives it: set-live, then
 * contacts added, imported or changed right after, before any worker has looked.
 */
describe('automation enrolment', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h);
  const alice = setup.account;
  const sink = useSmtpSink({ emptyBeforeEach: true });
  let france: number;

  beforeAll(async () => {
    france = await countryId(h, 'FR');
  });

  const received = () => sink.messages.map((m) => `${m.to[0]}: ${m.parsed.subject}`).sort();

  /** A draft welcome automation with one instant step, set live through the API. */
  async function liveWelcome(target: { contactType?: number; segment?: number }, subject: string): Promise<number> {
    const id = await f.automation(alice.user_id, { type: 'welcome', ...target, groupId: setup.group });
    await f.schedule(alice.user_id, id, { senderId: setup.sender, subject, waitingPeriod: 1, waitingType: 'instantly' });
    const { utr } = await h.runtime.db('automations').where({ id }).first('utr');
    const res = await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);
    expect(res.body).toEqual({ status: 'success', message: 'Automation has been set live' });
    return id;
  }

  async function runWorker(): Promise<void> {
    const { worker, close } = testWorker(h, sink.url);
    try {
      await worker.runOnce();
    } finally {
      await close();
    }
  }

  test('when a welcome automation is set live and a contact is added right after then that contact gets the welcome mail and earlier ones do not', async () => {
    const type = await addContactType(h, alice, 'Signups');
    await addContact(h, alice, { contact_type_id: type, email: 'early@example.org', first_name: 'Early', country: france });
    await liveWelcome({ contactType: type }, 'Welcome ((first_name))');
    await addContact(h, alice, { contact_type_id: type, email: 'new@example.org', first_name: 'Nina', country: france });

    await runWorker();
    expect(received()).toEqual(['new@example.org: Welcome Nina']);
    await runWorker();
    expect(received()).toEqual(['new@example.org: Welcome Nina']);
  });

  test('when a welcome automation is set live and 1,000 contacts are imported right after then each gets one welcome mail', async () => {
    const type = await addContactType(h, alice, 'Imported');
    await addContact(h, alice, { contact_type_id: type, email: 'before@example.org', first_name: 'Before', country: france });
    const automation = await liveWelcome({ contactType: type }, 'Hello ((first_name))');
    const rows = Array.from({ length: 1000 }, (_, i) => `First${i},imported${i}@example.org`);
    const csv = `first_name,email\n${rows.join('\n')}\n`;
    const res = await h.api(alice).post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', Buffer.from(csv), 'c.csv').expect(200);
    expect(res.body.summary).toMatchObject({ rows: 1000, created: 1000, skipped: 0 });

    await runWorker();
    const byAddress = new Map<string, string>(sink.messages.map((m) => [m.to[0], String(m.parsed.subject)]));
    expect(sink.messages).toHaveLength(1000);
    expect(byAddress.size).toBe(1000);
    expect(byAddress.get('imported0@example.org')).toBe('Hello First0');
    expect(byAddress.get('imported999@example.org')).toBe('Hello First999');
    expect(byAddress.has('before@example.org')).toBe(false);
    expect(await f.automationRecord(automation)).toMatchObject({ total_triggered: 1000, total_delivered: 1000 });
  }, 120_000);

  test('when contacts start to match a segment after its welcome automation is set live then they are enrolled at the next tick', async () => {
    const type = await addContactType(h, alice, 'Customers');
    const old = await addContact(h, alice, { contact_type_id: type, email: 'old@example.org', first_name: 'Olga', country: france, city: 'Lyon' });
    await addContact(h, alice, { contact_type_id: type, email: 'member@example.org', first_name: 'Max', country: france, city: 'Paris' });
    const saved = await h.api(alice)
      .post('/segment/save')
      .send({ segment_name: 'Parisians', contact_type_id: type, select_field: ['city'], select_operator: ['is'], value: ['Paris'] })
      .expect(200);
    expect(saved.body.message).toBe('Saved Successfully');
    const { id: segment } = await h.runtime.db('segments').where({ user_id: alice.user_id, segment_name: 'Parisians' }).first('id');
    await liveWelcome({ segment }, 'Bienvenue ((first_name))');

    await h.api(alice).post('/contacts/update').send({ contact_id: old, contact_type_id: type, email: 'old@example.org', country: france, city: 'Paris' }).expect(200);
    await addContact(h, alice, { contact_type_id: type, email: 'added@example.org', first_name: 'Ada', country: france, city: 'Paris' });
    await addContact(h, alice, { contact_type_id: type, email: 'elsewhere@example.org', first_name: 'Eve', country: france, city: 'Nice' });

    await runWorker();
    expect(received()).toEqual(['added@example.org: Bienvenue Ada', 'old@example.org: Bienvenue Olga']);
  });
});
