import { readReport } from '../../src/mail/bounce-reader';
import { bounceFixture } from '../support/bounce-fixtures';

const values = { verp: 'bounces+1a-0123456789abcdef0123@bounces.campaigns.test', token: '1a-0123456789abcdef0123', recipient: 'reader@example.org' };

describe('reading returned mail', () => {
  test.each([
    ['postfix-user-unknown.eml', { kind: 'bounce', permanent: true, status: '5.1.1' }],
    ['postfix-mailbox-full.eml', { kind: 'bounce', permanent: false, status: '4.2.2' }],
    ['exim-plain.eml', { kind: 'bounce', permanent: true, status: '5.1.1' }],
    ['sendmail-user-unknown.eml', { kind: 'bounce', permanent: true, status: '5.1.1' }],
    ['gmail-no-such-user.eml', { kind: 'bounce', permanent: true, status: '5.1.1' }],
    ['exchange-online-recipient-not-found.eml', { kind: 'bounce', permanent: true, status: '5.1.10' }],
    ['arf-abuse.eml', { kind: 'complaint' }],
    ['postfix-delayed.eml', { kind: 'not-a-failure' }],
    ['vacation-reply.eml', { kind: 'auto-reply' }],
  ])('when %s is read then it is understood and names the original message by its X-Campaign-Message', async (fixture, expected) => {
    const reading = await readReport(bounceFixture(fixture, values));
    expect(reading).toMatchObject(expected);
    if (reading.kind === 'bounce' || reading.kind === 'complaint') expect(reading).toMatchObject({ recipient: 'reader@example.org', token: values.token });
  });

  test('when a DSN has no per-recipient fields and no original headers then the status in its text and the VERP address it was sent to are used', async () => {
    const raw = [
      'From: MAILER-DAEMON@mx.example.net',
      `To: ${values.verp}`,
      'Subject: Returned mail: see transcript for details',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain',
      '',
      '----- The following addresses had permanent fatal errors -----',
      '<reader@example.org>',
      '    (reason: 550 5.7.1 Mailbox disabled for this recipient)',
      '',
      '--b1',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example.net',
      '',
      '--b1--',
      '',
    ].join('\r\n');
    expect(await readReport(raw)).toMatchObject({ kind: 'bounce', permanent: true, status: '5.7.1', token: values.token, diagnostic: '(reason: 550 5.7.1 Mailbox disabled for this recipient)' });
  });

  test('when a report shows the original it is about then it names it by the original\'s X-Campaign-Message and Message-ID, never by the report\'s own Message-ID', async () => {
    const full = await readReport(bounceFixture('arf-abuse.eml', values));
    expect(full).toMatchObject({ kind: 'complaint', token: values.token, named: { token: values.token } });
    const messageId = '<1a.0123456789abcdef@acme.test>';
    const headers = await readReport(bounceFixture('arf-headers-only.eml', { ...values, messageId }));
    expect(headers).toEqual({ kind: 'complaint', diagnostic: 'abuse report from ExampleFBL/2.1', token: values.token, named: { messageId } });
  });

  test('when a person simply replies then it is not taken for a bounce', async () => {
    const raw = ['From: Robin <robin@example.org>', `To: ${values.verp}`, 'Subject: Re: November news', '', 'Thanks!', ''].join('\r\n');
    expect(await readReport(raw)).toEqual({ kind: 'unrecognised', token: values.token });
  });
});
