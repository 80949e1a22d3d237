import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../../src/app';
import { withDefaultUser } from '../../src/db';
import { countryId, sendingFixtures, testWorker } from '../support/fixtures';
import { TestAccount, useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

/** Mixed case, with a `+`: every form it could be stored or logged in is searched for. */
const ADDRESS = 'Erin.Erasure+7@Privacy-Test.Example';
const FORMS = ['erin.erasure+7@privacy-test.example', 'erin.erasure+7', 'erin.erasure%2b7', 'erin.erasure%2b7%40'];

/** The forms of the address found in `bytes` (any case). */
function traces(bytes: Buffer | string): string[] {
  const text = (typeof bytes === 'string' ? bytes : bytes.toString('latin1')).toLowerCase();
  return FORMS.filter((form) => text.includes(form));
}

describe('a privacy erasure leaves nothing of the address behind', () => {
  const h = useHarness();
  const f = sendingFixtures(h);
  const sink = useSmtpSink();
  let log = '';
  let app: ReturnType<typeof createApp>;

  beforeAll(async () => {
    // The app as a server runs it, logging every request at info level (into `log`).
    const logger = pino({ level: 'info' }, { write: (line: string) => void (log += line) });
    app = createApp({ config: h.runtime.config, services: h.runtime.services, logger });
  });

  const api = (account: TestAccount) => ({
    get: (path: string) => request(app).get(`/api/v1${path}`).set(account.headers),
    post: (path: string) => request(app).post(`/api/v1${path}`).set(account.headers),
  });

  async function sendTo(account: TestAccount, type: number, group: number, sender: number): Promise<void> {
    await f.singleSend(account.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
  }

  async function databaseFiles(): Promise<{ name: string; bytes: Buffer | string }[]> {
    const { config, db } = h.runtime;
    if (config.databaseUrl) {
      return [{ name: 'pg_dump', bytes: execFileSync('pg_dump', ['--no-owner', withDefaultUser(config.databaseUrl)], { maxBuffer: 512 * 1024 * 1024 }) }];
    }
    await db.raw('pragma wal_checkpoint(passive)');
    return [config.sqliteFile, `${config.sqliteFile}-wal`].filter((file) => fs.existsSync(file)).map((file) => ({ name: file, bytes: fs.readFileSync(file) }));
  }

  test('when an address with a contact, a sent message, a bounce, a suppression and unsubscribes is erased then neither the database files nor the request log hold it, and it is still refused when it comes back', async () => {
    const alice = await h.account();
    const country = await countryId(h, 'FR');
    await api(alice).post('/contacts-type/add').send({ name: 'People' }).expect(200);
    const type = Number((await h.runtime.db('contact_types').where({ user_id: alice.user_id, name: 'People' }).first('id')).id);
    await api(alice).post('/contacts/add').send({ contact_type_id: type, email: ADDRESS, first_name: 'Erin', country }).expect(200);
    await api(alice).post('/contacts/add').send({ contact_type_id: type, email: 'other@privacy-test.example', first_name: 'Otto', country }).expect(200);
    const { sender, group } = await f.basics(alice);

    // Mail to the address bounces, with a diagnostic that quotes it; then it unsubscribes from everything.
    await sendTo(alice, type, group, sender);
    const message = await h.runtime.db('send_messages').where({ user_id: alice.user_id, email_key: ADDRESS.toLowerCase() }).first('id');
    const diagnostic = `550 5.1.1 <${ADDRESS}>: Recipient address rejected: User unknown in virtual mailbox table`;
    expect(await h.runtime.services.feedback.record(Number(message.id), { event: 'bounce', permanent: true, status: '5.1.1', diagnostic, source: 'dsn' })).toMatchObject({ result: 'recorded' });
    await api(alice).post('/global-unsubscribes/save').send({ email_address: ADDRESS }).expect(200);
    await api(alice).post('/unsubscribes-groups/manually-add').send({ unsubscribe_groups_id: group, email_address: ADDRESS }).expect(200);
    // The requests of a privacy officer, as a log would show them.
    await api(alice).get(`/contacts/privacy-export?email=${encodeURIComponent(ADDRESS)}`).expect(200);
    await api(alice).get(`/contacts/list?search=${encodeURIComponent('Erin.Erasure+7')}`).expect(200);
    const before = await databaseFiles();
    expect(before.flatMap((file) => traces(file.bytes))).not.toEqual([]);

    await api(alice).post('/contacts/erase').send({ email: ADDRESS }).expect(200);

    const after = await databaseFiles();
    expect(after.map((file) => ({ file: file.name, traces: traces(file.bytes) }))).toEqual(after.map((file) => ({ file: file.name, traces: [] })));
    expect(log).toContain('/api/v1/contacts/erase');
    expect(traces(log)).toEqual([]);

    // It comes back: the opt-outs hold for it again, and a send to everyone passes it by.
    await api(alice).post('/contacts/add').send({ contact_type_id: type, email: ADDRESS, first_name: 'Erin', country }).expect(200);
    const exported = (await api(alice).get(`/contacts/privacy-export?email=${encodeURIComponent(ADDRESS)}`).expect(200)).body.message.privacy;
    expect(exported).toMatchObject({ global_unsubscribe: { created_at: expect.any(String) }, suppressed: { reason: '(erased)' }, unsubscribe_groups: [{ unsubscribe_groups_id: group }] });
    const received = sink.messages.length;
    await sendTo(alice, type, group, sender);
    expect(sink.messages.slice(received).map((m) => m.to)).toEqual([['other@privacy-test.example']]);
  }, 60_000);
});
