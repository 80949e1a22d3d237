import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { PERMISSIONS } from '../../src/http/permissions';
import { createSubmission, SUBMISSION_AUTH_FAILURES } from '../../src/services/transactional/submission';
import { startSubmissionServer, SubmissionServer } from '../../src/workers/submission-server';
import { header, sendingFixtures, testWorker, useSendingSetup } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';
import { addRoleKey } from '../support/team';
import { TMP_DIR } from '../support/test-db';

describe('SMTP submission of transactional mail', () => {
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness();
  const f = sendingFixtures(h);
  const setup = useSendingSetup(h);
  let server: SubmissionServer;
  const dataDir = path.join(TMP_DIR, `submission-${process.pid}`);
  const MAX_BYTES = 64 * 1024;

  beforeAll(async () => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    const submission = createSubmission({ db: h.runtime.db, accounts: h.runtime.services.accounts, transactional: h.runtime.services.transactional, senders: PERMISSIONS.transactional.write });
    server = await startSubmissionServer({ config: { dataDir, submission: { port: 0, host: '127.0.0.1', tls: undefined, maxBytes: MAX_BYTES } }, submission, logger: h.runtime.logger });
  });
  afterAll(() => server?.close());

  /** A nodemailer client as an app would set it up: STARTTLS required, the self-signed certificate pinned by trust. */
  const client = (user: string, pass: string, options: Record<string, unknown> = {}) =>
    nodemailer.createTransport({ host: '127.0.0.1', port: server.port, secure: false, requireTLS: true, tls: { rejectUnauthorized: false }, auth: { user, pass }, ...options });

  async function deliver(): Promise<void> {
    const w = testWorker(h, sink.url);
    try {
      await w.worker.runOnce();
    } finally {
      await w.close();
    }
  }

  test('when an app submits with STARTTLS and AUTH then each recipient becomes a transactional message, its instructions read and removed', async () => {
    expect(fs.existsSync(path.join(dataDir, 'submission-cert.pem'))).toBe(true);
    expect(server.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    const info = await client(setup.account.public_key, setup.account.secret_key).sendMail({
      from: 'Acme News <news@acme.test>',
      to: 'mo@shop.test',
      cc: 'ned@shop.test',
      subject: 'Disk almost full',
      text: 'The disk of web-1 is 91% full.',
      html: '<p>The disk of <b>web-1</b> is 91% full.</p>',
      headers: { 'X-Tags': 'alert, disk', 'Idempotency-Key': 'alert-1', 'X-Host': 'web-1' },
      attachments: [{ filename: 'df.txt', content: 'Filesystem 91%' }],
    });
    expect(info.response).toMatch(/^250 2\.0\.0 Queued as tx_\d+ queued, tx_\d+ queued$/);
    const rows = await h.runtime.db('transactional_messages as t').join('send_messages as m', 'm.id', 't.id').where('t.user_id', setup.account.user_id).orderBy('t.id').select('m.email', 't.source', 't.tags');
    expect(rows.map((r) => [r.email, r.source, JSON.parse(r.tags)])).toEqual([
      ['mo@shop.test', 'smtp', ['alert', 'disk']],
      ['ned@shop.test', 'smtp', ['alert', 'disk']],
    ]);
    // The same key again: the first answer, nothing more queued.
    await client(setup.account.public_key, setup.account.secret_key).sendMail({ from: 'news@acme.test', to: 'mo@shop.test', cc: 'ned@shop.test', subject: 'Disk almost full', text: 'The disk of web-1 is 91% full.', html: '<p>The disk of <b>web-1</b> is 91% full.</p>', headers: { 'X-Tags': 'alert, disk', 'Idempotency-Key': 'alert-1', 'X-Host': 'web-1' }, attachments: [{ filename: 'df.txt', content: 'Filesystem 91%' }] });
    const queued = await h.runtime.db('transactional_messages').where({ user_id: setup.account.user_id }).count({ n: '*' }).first();
    expect(Number(queued?.n)).toBe(2);

    await deliver();
    const mails = await sink.waitFor(2);
    const mo = mails.find((m) => m.to[0] === 'mo@shop.test')!;
    expect(mo.parsed.subject).toBe('Disk almost full');
    expect(mo.parsed.text).toContain('91% full');
    expect(mo.parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([['df.txt', 'Filesystem 91%']]);
    expect(header(mo.raw, 'X-Host')).toBe('web-1');
    expect(header(mo.raw, 'X-Tags')).toBeUndefined();
    expect(header(mo.raw, 'Idempotency-Key')).toBeUndefined();
  });

  test('when the password is wrong then it is 535 5.7.8; a key that may not send is refused too; nothing is taken without signing in', async () => {
    await expect(client(setup.account.public_key, 'wrong').sendMail({ from: 'news@acme.test', to: 'x@shop.test', subject: 'x', text: 'x' })).rejects.toMatchObject({ responseCode: 535, response: expect.stringContaining('5.7.8') });
    const analyst = await addRoleKey(h, setup.account, 'analyst');
    await expect(client(analyst.public_key, analyst.secret_key).sendMail({ from: 'news@acme.test', to: 'x@shop.test', subject: 'x', text: 'x' })).rejects.toMatchObject({ responseCode: 535 });
    const anonymous = nodemailer.createTransport({ host: '127.0.0.1', port: server.port, secure: false, tls: { rejectUnauthorized: false } });
    await expect(anonymous.sendMail({ from: 'news@acme.test', to: 'x@shop.test', subject: 'x', text: 'x' })).rejects.toMatchObject({ responseCode: 530 });
    // AUTH is not offered before STARTTLS.
    const plain = client(setup.account.public_key, setup.account.secret_key, { requireTLS: false, ignoreTLS: true });
    await expect(plain.sendMail({ from: 'news@acme.test', to: 'x@shop.test', subject: 'x', text: 'x' })).rejects.toThrow();
    expect(await h.runtime.db('send_messages').where({ email: 'x@shop.test' }).first()).toBeUndefined();
  });

  test('when the From is not a verified sender then it is 550 5.7.1; a message over the size limit is 552; an over-long Idempotency-Key is 550', async () => {
    const unverified = await f.sender(setup.account.user_id, { from_email: 'new@acme.test', is_verified: 0 });
    expect(unverified).toBeGreaterThan(0);
    const mailer = client(setup.account.public_key, setup.account.secret_key);
    await expect(mailer.sendMail({ from: 'new@acme.test', to: 'y@shop.test', subject: 'x', text: 'x' })).rejects.toMatchObject({ responseCode: 550, response: expect.stringContaining('5.7.1') });
    await expect(mailer.sendMail({ from: 'news@acme.test', to: 'y@shop.test', subject: 'big', text: 'x'.repeat(MAX_BYTES * 2) })).rejects.toMatchObject({ responseCode: 552 });
    // The Idempotency-Key is checked as the API checks it: 1 to 256 characters.
    await expect(mailer.sendMail({ from: 'news@acme.test', to: 'y@shop.test', subject: 'x', text: 'x', headers: { 'Idempotency-Key': 'k'.repeat(257) } })).rejects.toMatchObject({
      responseCode: 550,
      response: expect.stringContaining('Idempotency-Key header must be 1 to 256 characters'),
    });
    expect(await h.runtime.db('send_messages').where({ email: 'y@shop.test' }).first()).toBeUndefined();
  });

  test(`when an address fails to sign in more than ${SUBMISSION_AUTH_FAILURES} times in a minute then even the right credentials are refused`, async () => {
    const other = await h.account();
    await f.sender(other.user_id);
    // Failures from this address (earlier tests' too) are counted in the minute's window: wrong
    // passwords are answered 535 until the count passes the limit, then everything is 454.
    const answers: number[] = [];
    while (answers.length < 3 * SUBMISSION_AUTH_FAILURES && answers.at(-1) !== 454) {
      answers.push(await client(other.public_key, `wrong-${answers.length}`).verify().then(() => 250, (err) => Number(err.responseCode)));
    }
    expect(answers.at(-1)).toBe(454);
    expect(answers.slice(0, -1).every((code) => code === 535)).toBe(true);
    expect(answers.length).toBeLessThanOrEqual(2 * SUBMISSION_AUTH_FAILURES + 1);
    await expect(client(other.public_key, other.secret_key).verify()).rejects.toMatchObject({ responseCode: 454 });
  });
});
