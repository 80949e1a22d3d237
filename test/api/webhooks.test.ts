import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { feedbackStamp } from '../../src/mail/feedback-stamp';
import { useHarness, TestAccount } from '../support/harness';
import { addContactType, header, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

const sendgridKeys = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const SENDGRID_PUBLIC_KEY = sendgridKeys.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
const TOPIC = 'arn:aws:sns:us-east-1:123456789012:ses-feedback';
const CERT_URL = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-9c6465fa7f48f5cacd23014631ec1136.pem';
const POSTMARK_AUTH = 'postmark-hooks:correct-horse-battery';
const MAILGUN_KEY = 'mailgun-signing-key-for-tests';
const MINUTE = 60_000;

describe('provider webhooks', () => {
  const h = useHarness({
    SES_SNS_TOPIC_ARNS: TOPIC,
    SENDGRID_WEBHOOK_PUBLIC_KEY: SENDGRID_PUBLIC_KEY,
    POSTMARK_WEBHOOK_AUTH: POSTMARK_AUTH,
    MAILGUN_WEBHOOK_SIGNING_KEY: MAILGUN_KEY,
  });
  const f = sendingFixtures(h);
  let alice: TestAccount;
  const sink = useSmtpSink();
  let sender: number;
  let group: number;
  let snsKey: crypto.KeyObject;
  const fetched: string[] = [];

  beforeAll(async () => {
    alice = await h.account();
    sender = await f.sender(alice.user_id);
    group = await f.group(alice.user_id);
    // A locally generated certificate stands in for SNS's: served for CERT_URL only.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sns-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem'), '-subj', '/CN=sns.amazonaws.com', '-days', '2'], { stdio: 'ignore' });
    snsKey = crypto.createPrivateKey(fs.readFileSync(path.join(dir, 'key.pem')));
    const cert = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
    fs.rmSync(dir, { recursive: true, force: true });
    h.runtime.services.webhooks.setHttpGet(async (url) => {
      fetched.push(url);
      if (url === CERT_URL) return cert;
      if (url.startsWith('https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription')) return '<ConfirmSubscriptionResponse/>';
      throw new Error(`unexpected fetch of ${url}`);
    });
  });
  beforeEach(() => {
    fetched.splice(0);
  });
  afterEach(() => h.runtime.services.webhooks.setClock(() => new Date()));

  /** One message to `email`, sent through the sink; its ledger token and Message-ID as the provider would echo them. */
  async function sent(email: string) {
    const type = await addContactType(h, alice, `Type ${email}`);
    await f.contact(alice.user_id, type, email);
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
    sink.messages.splice(0);
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
    const m = sink.messages[0];
    return { sendId, token: header(m.raw, 'X-Campaign-Message')!, messageId: header(m.raw, 'Message-ID')! };
  }

  const suppression = async (email: string) =>
    (await h.runtime.services.suppressions.list({ userId: alice.user_id })).rows.find((r) => r.email_address === email);

  // ---- Amazon SES through SNS ----

  function snsSigned(fields: Record<string, string>, version: '1' | '2' = '1'): Record<string, string> {
    const names = fields.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
    const text = names.filter((n) => fields[n] !== undefined).map((n) => `${n}\n${fields[n]}\n`).join('');
    const signature = crypto.sign(version === '2' ? 'RSA-SHA256' : 'RSA-SHA1', Buffer.from(text), snsKey).toString('base64');
    return { ...fields, SignatureVersion: version, Signature: signature, SigningCertURL: CERT_URL };
  }

  /** An SNS Notification carrying an SES notification, as SNS posts it (JSON as text/plain). */
  function sesNotification(message: Record<string, unknown>, version: '1' | '2' = '1') {
    return snsSigned({
      Type: 'Notification',
      MessageId: crypto.randomUUID(),
      TopicArn: TOPIC,
      Message: JSON.stringify(message),
      Timestamp: '2026-11-23T09:16:00.000Z',
      UnsubscribeURL: `https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=${TOPIC}:c9a1d2e3`,
    }, version);
  }

  const postSns = (body: Record<string, string>) =>
    request(h.runtime.app).post('/webhooks/ses').set('Content-Type', 'text/plain; charset=UTF-8').set('x-amz-sns-message-type', body.Type).send(JSON.stringify(body));

  function sesMail(email: string, token: string, messageId: string) {
    return {
      timestamp: '2026-11-23T09:15:58.000Z',
      source: 'news@acme.test',
      sourceArn: 'arn:aws:ses:us-east-1:123456789012:identity/acme.test',
      sourceIp: '192.0.2.10',
      sendingAccountId: '123456789012',
      messageId: '0100019356a1b2c3-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d-000000',
      destination: [email],
      headersTruncated: false,
      headers: [
        { name: 'From', value: 'Acme News <news@acme.test>' },
        { name: 'To', value: email },
        { name: 'Subject', value: 'November news' },
        { name: 'Message-ID', value: messageId },
        { name: 'X-Campaign-Message', value: token },
      ],
      commonHeaders: { from: ['Acme News <news@acme.test>'], to: [email], messageId, subject: 'November news' },
    };
  }

  test('when SNS confirms a subscription with a valid signature then the service opens the SubscribeURL; a forged one is refused', async () => {
    const subscribeUrl = `https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=2336412f37fb687f5d51e6e2425f004aed`;
    const confirmation = snsSigned({
      Type: 'SubscriptionConfirmation',
      MessageId: '165545c9-2a5c-472c-8df2-7ff2be2b3b1b',
      Token: '2336412f37fb687f5d51e6e2425f004aed',
      TopicArn: TOPIC,
      Message: `You have chosen to subscribe to the topic ${TOPIC}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`,
      SubscribeURL: subscribeUrl,
      Timestamp: '2026-11-23T09:00:00.000Z',
    });
    const forged = await postSns({ ...confirmation, SubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=other' }).expect(403);
    expect(forged.body).toEqual({ status: 'failed', errors: 'Invalid SNS signature.' });
    expect(fetched).toEqual([CERT_URL]);
    await postSns(confirmation).expect(200);
    expect(fetched).toEqual([CERT_URL, subscribeUrl]); // the certificate was cached
  });

  test('when SES reports a permanent bounce then it is recorded once and the address suppressed; a transient one only counts', async () => {
    const hard = await sent('ses-hard@example.org');
    const notification = sesNotification({
      notificationType: 'Bounce',
      bounce: {
        bounceType: 'Permanent',
        bounceSubType: 'General',
        bouncedRecipients: [{ emailAddress: 'ses-hard@example.org', action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
        timestamp: '2026-11-23T09:16:00.000Z',
        feedbackId: '0100019356a1b2c3-aaaa-bbbb-cccc-dddddddddddd-000000',
        remoteMtaIp: '192.0.2.25',
        reportingMTA: 'dsn; a8-70.smtp-out.amazonses.com',
      },
      mail: sesMail('ses-hard@example.org', hard.token, hard.messageId),
    });
    const res = await postSns(notification).expect(200);
    expect(res.body).toEqual({ status: 'success', message: { received: { recorded: 1, duplicate: 0, ignored: 0, unmatched: 0 } } });
    await postSns(notification).expect(200);
    expect(await f.send(hard.sendId)).toMatchObject({ delivered: 0, bounces: 1 });
    expect(await suppression('ses-hard@example.org')).toMatchObject({ reason: 'hard_bounce', diagnostic: 'smtp; 550 5.1.1 user unknown', source: 'ses' });

    const soft = await sent('ses-soft@example.org');
    await postSns(sesNotification({
      eventType: 'Bounce',
      bounce: { bounceType: 'Transient', bounceSubType: 'MailboxFull', bouncedRecipients: [{ emailAddress: 'ses-soft@example.org', status: '4.2.2', diagnosticCode: 'smtp; 452 4.2.2 Mailbox full' }], timestamp: '2026-11-23T09:16:00.000Z', feedbackId: 'f2' },
      mail: sesMail('ses-soft@example.org', soft.token, soft.messageId),
    }, '2')).expect(200);
    expect(await f.send(soft.sendId)).toMatchObject({ bounces: 1 });
    expect(await suppression('ses-soft@example.org')).toBeUndefined();
  });

  test('when SES reports a complaint then the address is globally unsubscribed and suppressed', async () => {
    const m = await sent('ses-complaint@example.org');
    await postSns(sesNotification({
      notificationType: 'Complaint',
      complaint: { complainedRecipients: [{ emailAddress: 'ses-complaint@example.org' }], timestamp: '2026-11-23T10:00:00.000Z', feedbackId: 'f3', complaintFeedbackType: 'abuse', userAgent: 'ExampleCorp Feedback Loop (V0.01)' },
      mail: sesMail('ses-complaint@example.org', m.token, m.messageId),
    })).expect(200);
    expect(await f.send(m.sendId)).toMatchObject({ unsubscribes: 1 });
    expect(await suppression('ses-complaint@example.org')).toMatchObject({ reason: 'complaint', source: 'ses' });
  });

  test('when an SNS message names a certificate outside sns.<region>.amazonaws.com, or another topic, then it is refused and nothing is recorded', async () => {
    const m = await sent('ses-forged@example.org');
    const bounce = sesNotification({
      notificationType: 'Bounce',
      bounce: { bounceType: 'Permanent', bounceSubType: 'General', bouncedRecipients: [{ emailAddress: 'ses-forged@example.org' }], timestamp: '2026-11-23T09:16:00.000Z', feedbackId: 'f4' },
      mail: sesMail('ses-forged@example.org', m.token, m.messageId),
    });
    for (const url of ['https://sns.us-east-1.amazonaws.com.evil.test/cert.pem', 'http://sns.us-east-1.amazonaws.com/cert.pem', 'https://evil.test/sns.us-east-1.amazonaws.com.pem']) {
      const res = await postSns({ ...bounce, SigningCertURL: url }).expect(403);
      expect(res.body).toEqual({ status: 'failed', errors: 'The signing certificate is not from SNS.' });
    }
    const tampered = { ...bounce, Message: bounce.Message.replace('ses-forged', 'someone-else') };
    expect((await postSns(tampered).expect(403)).body).toEqual({ status: 'failed', errors: 'Invalid SNS signature.' });
    const otherTopic = snsSigned({ Type: 'Notification', MessageId: 'x', TopicArn: 'arn:aws:sns:us-east-1:999999999999:theirs', Message: bounce.Message, Timestamp: bounce.Timestamp });
    expect((await postSns(otherTopic).expect(403)).body).toEqual({ status: 'failed', errors: 'This SNS topic is not configured here.' });
    expect(fetched.every((u) => u === CERT_URL)).toBe(true);
    expect(await f.send(m.sendId)).toMatchObject({ delivered: 1, bounces: 0 });
    expect(await suppression('ses-forged@example.org')).toBeUndefined();
  });

  // ---- SendGrid Event Webhook ----

  function sendgridPost(events: unknown[], sign = true, at = Date.now()) {
    const body = JSON.stringify(events);
    const timestamp = String(Math.floor(at / 1000));
    const signature = crypto.sign('sha256', Buffer.from(timestamp + body), sendgridKeys.privateKey).toString('base64');
    const req = request(h.runtime.app).post('/webhooks/sendgrid').set('Content-Type', 'application/json');
    if (sign) req.set('X-Twilio-Email-Event-Webhook-Signature', signature).set('X-Twilio-Email-Event-Webhook-Timestamp', timestamp);
    return { req, body, signature, timestamp };
  }

  test('when SendGrid posts signed bounce and spamreport events then they are recorded; delivered events are not failures', async () => {
    const bounced = await sent('sg-bounce@example.org');
    const spam = await sent('sg-spam@example.org');
    const events = [
      { email: 'sg-bounce@example.org', timestamp: 1795425360, 'smtp-id': bounced.messageId, event: 'bounce', category: ['newsletter'], sg_event_id: 'ZGVmZXJyZWQtMTAtMTc5NTQyNTM2MA', sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0', reason: '550 5.1.1 The email account that you tried to reach does not exist.', status: '5.1.1', type: 'bounce', bounce_classification: 'Invalid Address', tls: 1 },
      { email: 'sg-spam@example.org', timestamp: 1795425400, 'smtp-id': spam.messageId, event: 'spamreport', sg_event_id: 'c3BhbXJlcG9ydC0xNzk1NDI1NDAw', sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.1', campaign_message: spam.token },
      { email: 'sg-spam@example.org', timestamp: 1795425300, 'smtp-id': spam.messageId, event: 'delivered', response: '250 OK', sg_event_id: 'ZGVsaXZlcmVk', sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.1' },
    ];
    const res = await sendgridPost(events).req.send(JSON.stringify(events)).expect(200);
    expect(res.body.message.received).toEqual({ recorded: 2, duplicate: 0, ignored: 1, unmatched: 0 });
    expect(await suppression('sg-bounce@example.org')).toMatchObject({ reason: 'hard_bounce', source: 'sendgrid' });
    expect(await suppression('sg-spam@example.org')).toMatchObject({ reason: 'complaint', source: 'sendgrid' });
  });

  test('when SendGrid reports a message blocked for the sender\'s authentication (5.7.26) then it fails as policy and nobody is suppressed', async () => {
    const m = await sent('sg-dmarc@gmail.test');
    const events = [{
      email: 'sg-dmarc@gmail.test', timestamp: 1795425500, 'smtp-id': m.messageId, event: 'bounce', type: 'blocked', status: '5.7.26', campaign_message: m.token,
      reason: '550 5.7.26 This mail has been blocked because the sender is unauthenticated. Gmail requires all senders to authenticate with either SPF or DKIM.',
      sg_event_id: 'YmxvY2tlZC0xNzk1NDI1NTAw', sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.9', bounce_classification: 'Reputation',
    }];
    const res = await sendgridPost(events).req.send(JSON.stringify(events)).expect(200);
    expect(res.body.message.received).toEqual({ recorded: 1, duplicate: 0, ignored: 0, unmatched: 0 });
    expect(await suppression('sg-dmarc@gmail.test')).toBeUndefined();
    expect((await f.ledger(m.sendId))[0]).toMatchObject({ state: 3, failure_reason: 'policy' });
    expect(await f.send(m.sendId)).toMatchObject({ delivered: 0, bounces: 0, failed: 1 });
  });

  test('when a SendGrid signature is forged or missing then the request is refused and nothing is recorded', async () => {
    const m = await sent('sg-forged@example.org');
    const events = [{ email: 'sg-forged@example.org', timestamp: 1795425360, 'smtp-id': m.messageId, event: 'bounce', type: 'bounce', reason: '550 5.1.1 unknown', status: '5.1.1' }];
    const signed = sendgridPost(events);
    const other = [{ ...events[0], email: 'x@example.org' }];
    const forged = await request(h.runtime.app).post('/webhooks/sendgrid').set('Content-Type', 'application/json')
      .set('X-Twilio-Email-Event-Webhook-Signature', signed.signature).set('X-Twilio-Email-Event-Webhook-Timestamp', signed.timestamp)
      .send(JSON.stringify(other)).expect(403);
    expect(forged.body).toEqual({ status: 'failed', errors: 'Invalid SendGrid signature.' });
    const unsigned = await sendgridPost(events, false).req.send(JSON.stringify(events)).expect(401);
    expect(unsigned.body).toEqual({ status: 'failed', errors: 'The SendGrid signature headers are missing.' });
    expect(await suppression('sg-forged@example.org')).toBeUndefined();
    expect(await f.send(m.sendId)).toMatchObject({ delivered: 1, bounces: 0 });
  });

  test('when a SendGrid request is signed more than 10 minutes ago or ahead of our clock, or a captured one is replayed later, then it is refused with 403 and nothing is recorded', async () => {
    const m = await sent('sg-late@example.org');
    const events = [{ email: 'sg-late@example.org', timestamp: 1795425400, 'smtp-id': m.messageId, event: 'spamreport', campaign_message: m.token }];
    const body = JSON.stringify(events);
    const stale = { status: 'failed', errors: 'The SendGrid signature timestamp is too old or ahead of time.' };
    for (const at of [Date.now() - 11 * MINUTE, Date.parse('2015-06-01T09:00:00Z'), Date.now() + 5 * MINUTE]) {
      expect((await sendgridPost(events, true, at).req.send(body).expect(403)).body).toEqual(stale);
    }
    // Captured as it was posted, replayed 11 minutes later.
    const captured = sendgridPost(events);
    h.runtime.services.webhooks.setClock(() => new Date(Date.now() + 11 * MINUTE));
    const replayed = await request(h.runtime.app).post('/webhooks/sendgrid').set('Content-Type', 'application/json')
      .set('X-Twilio-Email-Event-Webhook-Signature', captured.signature).set('X-Twilio-Email-Event-Webhook-Timestamp', captured.timestamp)
      .send(captured.body).expect(403);
    expect(replayed.body).toEqual(stale);
    expect(await suppression('sg-late@example.org')).toBeUndefined();
    expect(await f.send(m.sendId)).toMatchObject({ unsubscribes: 0 });

    // Within the window (SendGrid batches events for a while) it is taken.
    h.runtime.services.webhooks.setClock(() => new Date());
    const late = await sendgridPost(events, true, Date.now() - 9 * MINUTE).req.send(body).expect(200);
    expect(late.body.message.received).toEqual({ recorded: 1, duplicate: 0, ignored: 0, unmatched: 0 });
  });

  // ---- Postmark ----

  const postmarkAuth = (auth: string) => `Basic ${Buffer.from(auth).toString('base64')}`;

  test('when Postmark posts a hard bounce and a spam complaint with its basic auth then both are recorded', async () => {
    const bounced = await sent('pm-bounce@example.org');
    const complained = await sent('pm-spam@example.org');
    const bounce = {
      RecordType: 'Bounce', MessageStream: 'outbound', ID: 4323372036854775807, Type: 'HardBounce', TypeCode: 1, Name: 'Hard bounce', Tag: 'newsletter',
      MessageID: '883953f4-6105-42a2-a16a-77a8eac79483', Metadata: { campaign_message: bounced.token }, ServerID: 23,
      Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).', Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
      Email: 'pm-bounce@example.org', From: 'news@acme.test', BouncedAt: '2026-11-23T09:16:54.9070259Z', DumpAvailable: true, Inactive: true, CanActivate: true, Subject: 'November news',
    };
    await request(h.runtime.app).post('/webhooks/postmark').set('Authorization', postmarkAuth(POSTMARK_AUTH)).send(bounce).expect(200);
    const complaint = {
      RecordType: 'SpamComplaint', MessageStream: 'outbound', ID: 42, Type: 'SpamComplaint', TypeCode: 512, Name: 'Spam complaint', Tag: 'newsletter',
      MessageID: '00000000-0000-0000-0000-000000000000', Metadata: { campaign_message: complained.token }, ServerID: 1234,
      Description: 'The subscriber explicitly marked this message as spam.', Details: 'Test spam complaint details', Email: 'pm-spam@example.org',
      From: 'news@acme.test', BouncedAt: '2026-11-23T10:00:00Z', DumpAvailable: true, Inactive: true, CanActivate: false, Subject: 'November news',
    };
    await request(h.runtime.app).post('/webhooks/postmark').set('Authorization', postmarkAuth(POSTMARK_AUTH)).send(complaint).expect(200);
    expect(await suppression('pm-bounce@example.org')).toMatchObject({ reason: 'hard_bounce', source: 'postmark', diagnostic: bounce.Details });
    expect(await suppression('pm-spam@example.org')).toMatchObject({ reason: 'complaint', source: 'postmark' });
    expect(await f.send(complained.sendId)).toMatchObject({ unsubscribes: 1 });
  });

  test('when Postmark credentials are wrong or missing then the answer is 401 and nothing is recorded', async () => {
    const m = await sent('pm-forged@example.org');
    const bounce = { RecordType: 'Bounce', Type: 'HardBounce', TypeCode: 1, Email: 'pm-forged@example.org', Metadata: { campaign_message: m.token }, Details: 'x' };
    for (const auth of [postmarkAuth('postmark-hooks:wrong'), 'Bearer whatever', undefined]) {
      const req = request(h.runtime.app).post('/webhooks/postmark');
      if (auth) req.set('Authorization', auth);
      const res = await req.send(bounce).expect(401);
      expect(res.body).toEqual({ status: 'failed', errors: 'Invalid credentials.' });
      expect(res.headers['www-authenticate']).toBe('Basic realm="webhooks"');
    }
    expect(await suppression('pm-forged@example.org')).toBeUndefined();
  });

  // ---- Mailgun ----

  function mailgunSigned(eventData: Record<string, unknown>, key = MAILGUN_KEY, at = Date.now()) {
    const timestamp = String(Math.floor(at / 1000));
    const token = crypto.randomBytes(25).toString('hex');
    return { signature: { timestamp, token, signature: crypto.createHmac('sha256', key).update(timestamp + token).digest('hex') }, 'event-data': eventData };
  }

  function mailgunFailed(email: string, messageId: string, severity: 'permanent' | 'temporary') {
    return {
      id: 'G9Bn5sl1TC6nu79C8C0bwg', timestamp: 1795425360.375624, 'log-level': 'error', event: 'failed', severity, reason: 'bounce',
      envelope: { sender: 'news@acme.test', transport: 'smtp', targets: email },
      flags: { 'is-routed': false, 'is-authenticated': true, 'is-system-test': false, 'is-test-mode': false },
      'delivery-status': { 'attempt-no': 1, message: '5.1.1 The email account that you tried to reach does not exist.', code: 550, description: '', 'session-seconds': 0.4 },
      message: { headers: { to: email, 'message-id': messageId.replace(/^<|>$/g, ''), from: 'Acme News <news@acme.test>', subject: 'November news' }, attachments: [], size: 2048 },
      recipient: email, 'recipient-domain': 'example.org', storage: { url: 'https://se.api.mailgun.net/v3/domains/acme.test/messages/message_key', key: 'message_key' },
      campaigns: [], tags: ['newsletter'], 'user-variables': {},
    };
  }

  test('when Mailgun posts a signed permanent failure then it is recorded; a temporary one is still being retried and is not', async () => {
    const hard = await sent('mg-hard@example.org');
    const res = await request(h.runtime.app).post('/webhooks/mailgun').send(mailgunSigned(mailgunFailed('mg-hard@example.org', hard.messageId, 'permanent'))).expect(200);
    expect(res.body.message.received).toEqual({ recorded: 1, duplicate: 0, ignored: 0, unmatched: 0 });
    expect(await suppression('mg-hard@example.org')).toMatchObject({ reason: 'hard_bounce', source: 'mailgun', diagnostic: '550 5.1.1 The email account that you tried to reach does not exist.' });

    const retrying = await sent('mg-later@example.org');
    await request(h.runtime.app).post('/webhooks/mailgun').send(mailgunSigned(mailgunFailed('mg-later@example.org', retrying.messageId, 'temporary'))).expect(200);
    expect(await f.send(retrying.sendId)).toMatchObject({ delivered: 1, bounces: 0 });
  });

  test('when a Mailgun signature is forged then the answer is 403 and nothing is recorded', async () => {
    const m = await sent('mg-forged@example.org');
    const res = await request(h.runtime.app).post('/webhooks/mailgun').send(mailgunSigned(mailgunFailed('mg-forged@example.org', m.messageId, 'permanent'), 'not-the-key')).expect(403);
    expect(res.body).toEqual({ status: 'failed', errors: 'Invalid Mailgun signature.' });
    expect(await suppression('mg-forged@example.org')).toBeUndefined();
  });

  function mailgunComplained(email: string, messageId: string) {
    return {
      id: '-Agny091SquKnsrW2NEKUA', timestamp: 1795425400.1, 'log-level': 'warn', event: 'complained',
      envelope: { sending_ip: '192.0.2.10' }, flags: { 'is-test-mode': false },
      message: { headers: { to: email, 'message-id': messageId.replace(/^<|>$/g, ''), from: 'Acme News <news@acme.test>', subject: 'November news' }, attachments: [], size: 2048 },
      recipient: email, campaigns: [], tags: ['newsletter'], 'user-variables': {},
    };
  }

  const postMailgun = (payload: unknown) => request(h.runtime.app).post('/webhooks/mailgun').send(payload as object);
  const globallyUnsubscribed = async (email: string) =>
    (await h.runtime.services.globalUnsubscribes.list({ userId: alice.user_id })).rows.some((r) => r.email_address === email);

  test('when a captured Mailgun request is posted again, or its signature comes with a complaint about another message, then it is refused with 403 and nothing more is recorded', async () => {
    const first = await sent('mg-once@example.org');
    const other = await sent('mg-other@example.org');
    const captured = mailgunSigned(mailgunFailed('mg-once@example.org', first.messageId, 'permanent'));
    expect((await postMailgun(captured).expect(200)).body.message.received).toEqual({ recorded: 1, duplicate: 0, ignored: 0, unmatched: 0 });

    const used = { status: 'failed', errors: 'This Mailgun signature was used before.' };
    expect((await postMailgun(captured).expect(403)).body).toEqual(used);
    const forged = { signature: captured.signature, 'event-data': mailgunComplained('mg-other@example.org', other.messageId) };
    expect((await postMailgun(forged).expect(403)).body).toEqual(used);
    expect(await suppression('mg-other@example.org')).toBeUndefined();
    expect(await globallyUnsubscribed('mg-other@example.org')).toBe(false);
    expect(await f.send(other.sendId)).toMatchObject({ delivered: 1, unsubscribes: 0 });
    expect(await f.send(first.sendId)).toMatchObject({ delivered: 0, bounces: 1 });
  });

  test('when one fresh Mailgun signature arrives several times at once then exactly one request is taken', async () => {
    const m = await sent('mg-race@example.org');
    const payload = mailgunSigned(mailgunComplained('mg-race@example.org', m.messageId));
    const answers = await Promise.all([postMailgun(payload), postMailgun(payload), postMailgun(payload), postMailgun(payload)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 403, 403, 403]);
    expect(answers.find((r) => r.status === 200)!.body.message.received).toEqual({ recorded: 1, duplicate: 0, ignored: 0, unmatched: 0 });
    expect(await f.send(m.sendId)).toMatchObject({ unsubscribes: 1 });
  });

  test('when a Mailgun signature is older than 5 minutes (one from 2015) or ahead of our clock then it is refused with 403 and nothing is recorded; one 4 minutes old is taken', async () => {
    const m = await sent('mg-redated@example.org');
    const stale = { status: 'failed', errors: 'The Mailgun signature timestamp is too old or ahead of time.' };
    for (const at of [Date.parse('2015-03-01T12:00:00Z'), Date.now() - 6 * MINUTE, Date.now() + 3 * MINUTE]) {
      const res = await postMailgun(mailgunSigned(mailgunComplained('mg-redated@example.org', m.messageId), MAILGUN_KEY, at)).expect(403);
      expect(res.body).toEqual(stale);
    }
    expect(await suppression('mg-redated@example.org')).toBeUndefined();
    expect(await globallyUnsubscribed('mg-redated@example.org')).toBe(false);
    expect(await f.send(m.sendId)).toMatchObject({ unsubscribes: 0 });

    await postMailgun(mailgunSigned(mailgunComplained('mg-redated@example.org', m.messageId), MAILGUN_KEY, Date.now() - 4 * MINUTE)).expect(200);
    expect(await suppression('mg-redated@example.org')).toMatchObject({ reason: 'complaint', source: 'mailgun' });
  });

  test('when a captured Mailgun request is replayed after its window then it is refused, and the tokens seen before are forgotten', async () => {
    const m = await sent('mg-later-replay@example.org');
    const captured = mailgunSigned(mailgunFailed('mg-later-replay@example.org', m.messageId, 'temporary'));
    await postMailgun(captured).expect(200);
    const tokens = () => h.runtime.db('provider_webhook_tokens').orderBy('token').pluck('token');
    expect(await tokens()).toContain(captured.signature.token);

    const later = Date.now() + 11 * MINUTE;
    h.runtime.services.webhooks.setClock(() => new Date(later));
    const replayed = await postMailgun(captured).expect(403);
    expect(replayed.body).toEqual({ status: 'failed', errors: 'The Mailgun signature timestamp is too old or ahead of time.' });
    const fresh = mailgunSigned(mailgunFailed('mg-later-replay@example.org', m.messageId, 'temporary'), MAILGUN_KEY, later);
    await postMailgun(fresh).expect(200);
    // Every token of this file's earlier requests has expired and is gone: only the last one is kept.
    expect(await tokens()).toEqual([fresh.signature.token]);
  });

  test('when an event names no message of this service then it is counted as unmatched, never matched by address', async () => {
    await sent('by-address@example.org');
    const res = await request(h.runtime.app).post('/webhooks/mailgun')
      .send(mailgunSigned(mailgunFailed('by-address@example.org', '20261123091500.abc@acme.test', 'permanent'))).expect(200);
    expect(res.body.message.received).toEqual({ recorded: 0, duplicate: 0, ignored: 0, unmatched: 1 });
    expect(await suppression('by-address@example.org')).toBeUndefined();
  });

  test('when the relay is SendGrid, Mailgun or Postmark then each message asks it to echo the token', () => {
    const message = { from: 'a@acme.test', to: 'b@example.org', subject: 's', html: '<p>x</p>' };
    const token = (url: string) => feedbackStamp('secret', undefined, url)(message, 7).headers!;
    const own = token('smtp://x')['X-Campaign-Message'];
    expect(token('smtp://apikey:k@smtp.sendgrid.net:587')['X-SMTPAPI']).toBe(JSON.stringify({ unique_args: { campaign_message: own } }));
    expect(token('smtps://u:p@smtp.eu.mailgun.org:465')['X-Mailgun-Variables']).toBe(JSON.stringify({ campaign_message: own }));
    expect(token('smtp://t:t@smtp.postmarkapp.com:587')['X-PM-Metadata-campaign_message']).toBe(own);
    expect(Object.keys(token('smtp://relay.example.net'))).toEqual(['X-Campaign-Message']);
  });
});
