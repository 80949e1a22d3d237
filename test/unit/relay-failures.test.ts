import { classifyRelayError, isPolicyRefusal } from '../../src/mail/relay-transports';
import { servesDomain } from '../../src/services/delivery/relays';
import { encodePiece } from '../../src/mail/quoted-printable';
import { jsonParts } from '../../src/mail/relays/shared';

const smtp = (responseCode: number | undefined, response: string, code = 'EENVELOPE') => Object.assign(new Error(response), { responseCode, response, code });

describe('relay failures', () => {
  test.each([
    ['550 5.7.26 Unauthenticated email from example.com is not accepted due to domain\'s DMARC policy', true],
    ['550 5.7.515 Access denied, sending domain does not meet the required authentication level', true],
    ['421 4.7.32 Your email has been rate limited because the From: header is not aligned', true],
    ['550 5.7.1 Email rejected per DMARC policy for example.com', true],
    ['550 5.7.1 Relaying denied', false],
    ['550 5.1.1 The email account that you tried to reach does not exist', false],
  ])('when a server answers "%s" then it is a policy refusal: %s', (text, expected) => {
    expect(isPolicyRefusal(text)).toBe(expected);
  });

  test('when an SMTP relay refuses for policy, or an address, or goes away then the message and the relay are judged apart', () => {
    expect(classifyRelayError('smtp', smtp(550, '550 5.7.26 DMARC policy'))).toMatchObject({ relayDown: false, outcome: 'policy', code: 550 });
    expect(classifyRelayError('smtp', smtp(550, '550 5.1.1 No such user'))).toMatchObject({ relayDown: false, outcome: 'bounce' });
    expect(classifyRelayError('smtp', smtp(421, '421 Server shutting down', 'EPROTOCOL'))).toMatchObject({ relayDown: true, outcome: 'retry' });
    expect(classifyRelayError('smtp', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNECTION' }))).toMatchObject({ relayDown: true, outcome: 'retry', code: null });
    expect(classifyRelayError('smtp', smtp(451, '451 4.3.0 try again later'))).toMatchObject({ relayDown: false, outcome: 'retry' });
  });

  test('when mailgun.js reports a request that got no answer as a 400 then it is the relay failing, not a refusal of the message', () => {
    const mailgun = (status: number, message: string, details: string) => Object.assign(new Error(message), { status, message, details, type: 'MailgunAPIError' });
    expect(classifyRelayError('mailgun', mailgun(400, 'ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1'))).toMatchObject({ relayDown: true, outcome: 'retry', code: null });
    expect(classifyRelayError('mailgun', mailgun(400, 'Bad Request', "'to' parameter is not a valid address"))).toMatchObject({ relayDown: false, outcome: 'failed', code: 400 });
  });

  test('when a relay lists domains then it serves them and their subdomains only; with none it serves any', () => {
    expect(servesDomain(['acme.test'], 'acme.test')).toBe(true);
    expect(servesDomain(['acme.test'], 'news.acme.test')).toBe(true);
    expect(servesDomain(['acme.test'], 'notacme.test')).toBe(false);
    expect(servesDomain([], 'anything.example')).toBe(true);
  });
});

describe('a pre-encoded message through a JSON API', () => {
  test('when the worker hands a relay quoted-printable parts then the provider gets the words as written, accents, long lines and equals signs included', () => {
    const html = `<p style="margin:0">Grüße, Zoë — ${'ünïcödé '.repeat(30)}= 100 %</p>\n<p>a=b&amp;c=3D</p>`;
    const text = `Grüße\n${'long line '.repeat(20)}\n€ = €`;
    const message = { from: { name: 'Team "A"', address: 'team@example.com' }, to: 'ann@example.com', subject: 'Hi', html: encodePiece(html), text: encodePiece(text), encoded: true };
    expect(message.html).toMatch(/=\r\n/);
    const parts = jsonParts(message);
    expect(parts.html).toBe(html.replace(/\n/g, '\r\n'));
    expect(parts.text).toBe(text.replace(/\n/g, '\r\n'));
    expect(parts.from).toBe('"Team A" <team@example.com>');
  });
});
