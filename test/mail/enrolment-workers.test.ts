import { isPostgres } from '../../src/db';
import { MESSAGE_STATE } from '../../src/lib/constants';
import { addContact, addContactType, countryId, sendingFixtures } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { untilCount, useServiceProcesses } from '../support/processes';
import { useSmtpSink } from '../support/smtp';

const IMPORTED = 1000;

describe('welcome automations with worker processes running', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const sink = useSmtpSink();
  const processes = useServiceProcesses(h, 'enrolment');
  const startWorker = () => processes.start(['--role=worker'], { SMTP_URL: sink.url });

  test('when set live while workers run (two on PostgreSQL) then contacts added, imported or newly matching a segment right after each get one welcome mail', async () => {
    const alice = await h.account();
    const api = () => h.api(alice);
    const { sender, group } = await f.basics(alice);
    const france = await countryId(h, 'FR');
    const type = await addContactType(h, alice, 'Everyone');
    const old = await addContact(h, alice, { contact_type_id: type, email: 'old@example.org', first_name: 'Olga', country: france, city: 'Lyon' });
    await api().post('/segment/save').send({ segment_name: 'Parisians', contact_type_id: type, select_field: ['city'], select_operator: ['is'], value: ['Paris'] }).expect(200);
    const { id: segment } = await h.runtime.db('segments').where({ user_id: alice.user_id, segment_name: 'Parisians' }).first('id');
    const welcome = await f.automation(alice.user_id, { type: 'welcome', contactType: type, groupId: group });
    await f.schedule(alice.user_id, welcome, { senderId: sender, subject: 'Welcome ((first_name))', waitingPeriod: 1, waitingType: 'instantly' });
    const parisians = await f.automation(alice.user_id, { type: 'welcome', segment, groupId: group });
    await f.schedule(alice.user_id, parisians, { senderId: sender, subject: 'Bienvenue ((first_name))', waitingPeriod: 1, waitingType: 'instantly' });

    const running = isPostgres(h.runtime.db) ? [startWorker(), startWorker()] : [startWorker()];
    for (const id of [welcome, parisians]) {
      const { utr } = await h.runtime.db('automations').where({ id }).first('utr');
      await api().get(`/automations/set-live?utr=${utr}`).expect(200);
    }
    await addContact(h, alice, { contact_type_id: type, email: 'new@example.org', first_name: 'Nina', country: france, city: 'Nice' });
    const rows = Array.from({ length: IMPORTED }, (_, i) => `First${i},imported${i}@example.org`);
    await api().post('/contacts/upload-csv').field('contact_type_id', String(type)).attach('file', Buffer.from(`first_name,email\n${rows.join('\n')}\n`), 'c.csv').expect(200);
    await api().post('/contacts/update').send({ contact_id: old, contact_type_id: type, email: 'old@example.org', country: france, city: 'Paris' }).expect(200);

    const expected = IMPORTED + 2;
    const sent = async () => {
      const row = await h.runtime.db('send_messages').whereIn('automation_id', [welcome, parisians]).where({ state: MESSAGE_STATE.sent }).count({ n: '*' }).first();
      return Number(row?.n);
    };
    await untilCount(async () => Math.min(sink.messages.length, await sent()), expected, 20_000, 'welcome mails received and recorded');
    for (const w of running) w.child.kill('SIGTERM');
    for (const w of running) expect(await w.exited).toBe(0);

    const received = new Map<string, number>();
    for (const m of sink.messages) received.set(`${m.to[0]}: ${m.parsed.subject}`, (received.get(`${m.to[0]}: ${m.parsed.subject}`) ?? 0) + 1);
    expect(sink.messages).toHaveLength(expected);
    expect(Math.max(...received.values())).toBe(1);
    expect(received.get('new@example.org: Welcome Nina')).toBe(1);
    expect(received.get('old@example.org: Bienvenue Olga')).toBe(1);
    for (let i = 0; i < IMPORTED; i += 1) expect(received.get(`imported${i}@example.org: Welcome First${i}`)).toBe(1);
    expect(await f.automationRecord(welcome)).toMatchObject({ total_triggered: IMPORTED + 1, total_delivered: IMPORTED + 1 });
  }, 120_000);
});
