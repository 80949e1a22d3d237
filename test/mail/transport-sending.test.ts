import crypto from 'node:crypto';
import { classifySendError, createMailTransport } from '../../src/mail/transport';
import { header } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

describe('the sending transport', () => {
  const sink = useSmtpSink({
    onRecipient: (address) => {
      if (address.startsWith('busy@')) return { code: 451, message: '4.7.1 Greylisted, try again' };
      if (address.startsWith('nobody@')) return { code: 550, message: '5.1.1 User unknown' };
      return undefined;
    },
  });

  test('when DKIM is configured then the signature covers both unsubscribe headers', async () => {
    const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const transport = createMailTransport({
      smtpUrl: sink.url,
      outboxDir: '',
      dkim: { domain: 'acme.test', selector: 'mail', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
    });
    try {
      await transport.send({
        from: 'news@acme.test',
        to: 'reader@example.org',
        subject: 'Signed',
        html: '<p>x</p>',
        headers: { 'List-Unsubscribe': '<https://campaigns.test/unsubscribe/t>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      });
      const [message] = await sink.waitFor(1);
      const signature = header(message.raw, 'DKIM-Signature')!;
      expect(signature).toMatch(/d=acme\.test;/);
      expect(signature).toMatch(/s=mail;/);
      const signed = /(?:^|;)\s*h=([^;]+);/.exec(signature)![1].replace(/\s+/g, '').toLowerCase().split(':');
      expect(signed).toEqual(expect.arrayContaining(['from', 'subject', 'message-id', 'list-unsubscribe', 'list-unsubscribe-post']));
    } finally {
      transport.close();
    }
  });

  test('when the server answers 4xx, 5xx or is unreachable then the failure is classified retry, bounce, retry', async () => {
    const transport = createMailTransport({ smtpUrl: sink.url, outboxDir: '', dkim: undefined });
    const failure = (to: string) => transport.send({ from: 'news@acme.test', to, subject: 's', html: 'x' }).then(() => undefined, classifySendError);
    try {
      expect(await failure('busy@example.org')).toEqual({ outcome: 'retry', code: 451, message: expect.stringContaining('Greylisted') });
      expect(await failure('nobody@example.org')).toEqual({ outcome: 'bounce', code: 550, message: expect.stringContaining('User unknown') });
    } finally {
      transport.close();
    }
    // A port nobody listens on: a connection error, retried later.
    const closed = createMailTransport({ smtpUrl: 'smtp://127.0.0.1:1', outboxDir: '', dkim: undefined });
    try {
      const refused = await closed.send({ from: 'a@acme.test', to: 'b@example.org', subject: 's', html: 'x' }).then(() => undefined, classifySendError);
      expect(refused).toMatchObject({ outcome: 'retry', code: null });
      expect(refused?.message).toMatch(/ECONNREFUSED|ECONNECTION|ESOCKET/);
    } finally {
      closed.close();
    }
  });
});
