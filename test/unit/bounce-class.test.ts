import { bounceClass } from '../../src/lib/bounce-class';
import { readReport } from '../../src/mail/bounce-reader';
import { bounceFixture } from '../support/bounce-fixtures';

const values = { verp: 'bounces+1a-0123456789abcdef0123@bounces.campaigns.test', token: '1a-0123456789abcdef0123', recipient: 'reader@example.org' };

describe('bounce classes', () => {
  test.each([
    ['postfix-user-unknown.eml', 'hard'],
    ['exim-plain.eml', 'hard'],
    ['sendmail-user-unknown.eml', 'hard'],
    ['gmail-no-such-user.eml', 'hard'],
    ['exchange-online-recipient-not-found.eml', 'hard'],
    ['postfix-mailbox-full.eml', 'mailbox_full'],
    ['outlook-unauthenticated.eml', 'policy'],
    ['postfix-gmail-unauthenticated.eml', 'policy'],
  ])('when the returned mail %s is read then its class is %s', async (fixture, expected) => {
    const reading = await readReport(bounceFixture(fixture, values));
    if (reading.kind !== 'bounce') throw new Error(`${fixture} was read as ${reading.kind}`);
    expect(bounceClass(reading.status, reading.diagnostic)).toBe(expected);
  });

  // Replies as the providers' servers send them at SMTP time.
  test.each([
    ['550-5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient\'s email address for typos', 'hard'],
    ['550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup', 'hard'],
    ['554 delivery error: dd This user doesn\'t have a yahoo.com account (someone@yahoo.com) [0] - mta1234.mail.ne1.yahoo.com', 'hard'],
    ['552-5.2.2 The recipient\'s inbox is out of storage space. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaPerm', 'mailbox_full'],
    ['452 4.2.2 The email account that you tried to reach is over quota', 'mailbox_full'],
    ['421-4.7.28 Gmail has detected an unusual rate of unsolicited mail originating from your SPF domain', 'policy'],
    ['451 4.7.650 The mail server [203.0.113.5] has been temporarily rate limited due to IP reputation', 'policy'],
    ['550 5.7.515 Access denied, sending domain [ACME.TEST] doesn\'t meet the required authentication level', 'policy'],
    ['421 4.7.0 [TSS04] Messages from 203.0.113.5 temporarily deferred due to unexpected volume or user complaints', 'policy'],
    ['451 4.3.0 Mail server temporarily rejected message', 'soft'],
    ['450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered', 'soft'],
    ['421 Service not available, closing transmission channel', 'soft'],
    ['554 5.6.0 Message content rejected', 'other'],
  ])('when a server answers "%s" then its class is %s', (reply, expected) => {
    expect(bounceClass(undefined, reply)).toBe(expected);
  });

  test('when the status field and the text disagree then the status field wins', () => {
    expect(bounceClass('4.2.2', 'smtp; 550 5.1.1 user unknown')).toBe('mailbox_full');
  });
});
