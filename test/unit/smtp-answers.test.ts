import { classifyRelayError } from '../../src/mail/relay-transports';
import { handedOver } from '../../src/mail/hand-over';
import { classifySendError, smtpAnswer, storedAnswer, wholeSentences } from '../../src/mail/transport';

/** A nodemailer error as it reaches the worker: a multi-line reply is joined with "\n", the library's code beside it. */
const refusal = (responseCode: number, response: string, code = 'EMESSAGE') => Object.assign(new Error(`Message failed: ${response}`), { responseCode, response, code });

/** A connection reset after the whole message went: no answer, so the relay may have it. */
const silentAfterHandOver = (text: string) => {
  return handedOver(Object.assign(new Error(`${text} ${text} ${text}`), { code: 'ECONNRESET' }));
};

const GMAIL = [
  '550-5.7.26 This mail has been blocked because the sender is unauthenticated.',
  '550-5.7.26 Gmail requires all senders to authenticate with either SPF or DKIM.',
  '550-5.7.26',
  '550-5.7.26  Authentication results:',
  '550-5.7.26  DKIM = did not pass',
  '550-5.7.26  SPF [acme.example] with ip: [192.0.2.1] = did not pass',
  '550-5.7.26',
  '550-5.7.26  For instructions on setting up authentication, go to',
  '550 5.7.26  https://support.google.com/mail/answer/81126#authentication a1-20020a05.1 - gsmtp',
].join('\n');

describe('SMTP answers', () => {
  test('when a server refuses with a multi-line answer then the whole answer is kept, its codes once, without the library\'s code', () => {
    const failure = classifySendError(refusal(550, GMAIL));
    expect(failure).toEqual({
      outcome: 'bounce',
      code: 550,
      message: '550 5.7.26 This mail has been blocked because the sender is unauthenticated. Gmail requires all senders to authenticate with either SPF or DKIM. Authentication results: DKIM = did not pass SPF [acme.example] with ip: [192.0.2.1] = did not pass For instructions on setting up authentication, go to https://support.google.com/mail/answer/81126#authentication a1-20020a05.1 - gsmtp',
    });
  });

  test('when an answer is one line then it is kept as said; an error without an answer keeps its code, which is all it has', () => {
    expect(classifySendError(refusal(451, '451 4.2.2 Mailbox full, try again later', 'EENVELOPE')).message).toBe('451 4.2.2 Mailbox full, try again later');
    expect(smtpAnswer('554 Transaction failed')).toBe('554 Transaction failed');
    expect(classifySendError(Object.assign(new Error('Connection timeout'), { code: 'ETIMEDOUT' })).message).toBe('ETIMEDOUT: Connection timeout');
  });

  test('when an answer is longer than its column then it is cut after a whole sentence, never inside one', () => {
    const long = Array.from({ length: 20 }, (_, i) => `Sentence number ${i} says something about the refusal.`).join(' ');
    const cut = wholeSentences(long);
    expect(cut.length).toBeLessThanOrEqual(480);
    expect(cut).toMatch(/refusal\. …$/);
    expect(long.startsWith(cut.slice(0, -2))).toBe(true);
    expect(smtpAnswer(`550-5.7.1 ${long.slice(0, 300)}\n550 5.7.1 ${long.slice(300)}`)).toMatch(/^550 5\.7\.1 Sentence number 0 .*refusal\. …$/);
  });

  test('when a relay goes silent after taking a message with a long error then the text is cut at a word and keeps its closing bracket', () => {
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    for (const failure of [classifySendError(silentAfterHandOver(long)), classifyRelayError('postmark', silentAfterHandOver(long))]) {
      expect(failure.outcome).toBe('unconfirmed');
      expect(failure.message.length).toBeLessThanOrEqual(480);
      expect(failure.message).toMatch(/^The relay stopped answering after taking the message; .* \((smtp|postmark): (ECONNRESET: )?word0 .* …\)$/);
      expect(failure.message).not.toMatch(/word\d*[^\d ]… /);
    }
  });

  test('when a failure was stored before answers were kept whole then the dashboard shows it without the library\'s code', () => {
    expect(storedAnswer('EMESSAGE: 550-5.7.26 This mail has been blocked because the sender is')).toBe('550 5.7.26 This mail has been blocked because the sender is');
    expect(storedAnswer('EENVELOPE: 451 4.2.2 Mailbox full')).toBe('451 4.2.2 Mailbox full');
    expect(storedAnswer('ETIMEDOUT: Connection timeout')).toBe('ETIMEDOUT: Connection timeout');
    expect(storedAnswer('550 5.7.26 Unauthenticated email')).toBe('550 5.7.26 Unauthenticated email');
  });
});
