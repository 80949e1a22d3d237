import { authenticate } from 'mailauth';
import { useHarness } from '../support/harness';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { startSmtpSink, SmtpSink, useSmtpSink } from '../support/smtp';
import { startDnsServer, TestDnsServer } from '../support/dns';
import { ProviderEmulator, startProviderEmulator } from '../support/provider-emulators';

type DomainAnswer = { id: number; status: string; records: Array<{ host: string; type: string; value: string }> };

/** The relays that hand on the message as MIME bytes, which the service signs itself. */
const KINDS = ['smtp', 'ses', 'mailgun'] as const;

describe('mail from a verified sending domain through an account\'s relay', () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(() => dns.close());
  // The instance's own way out, which signs with DKIM_DOMAIN: nothing may leave through it here.
  const instance = useSmtpSink();
  const h = useHarness({ DNS_SERVERS: () => dns.address, SMTP_URL: () => instance.url, RELAY_ALLOW_PRIVATE: '1' });
  const f = sendingFixtures(h);

  describe.each(KINDS)('%s', (kind) => {
    const domain = `${kind}-relayed.test`;
    const [account] = h.accounts(1);
    let relaySink: SmtpSink | undefined;
    let emulator: ProviderEmulator | undefined;

    beforeAll(async () => {
      if (kind === 'smtp') relaySink = await startSmtpSink();
      else emulator = await startProviderEmulator(kind);
    });
    afterAll(async () => {
      await relaySink?.close();
      await emulator?.close();
    });

    /** The raw messages the relay received. */
    const received = (): Buffer[] => (relaySink ? relaySink.messages.map((m) => Buffer.from(m.raw)) : emulator!.messages.map((m) => m.raw!));

    test(`when a send from the domain goes through a${kind === 'smtp' ? 'n SMTP' : ` ${kind.toUpperCase()}`} relay then the relay gets it signed d=${domain}, passing DKIM and DMARC`, async () => {
      const api = h.api(account);
      const saved = (await api.post('/domains/save').send({ domain }).expect(200)).body.message.domain as DomainAnswer;
      for (const record of saved.records) dns.set(record.host, record.type as 'TXT', [record.value]);
      dns.set(`_dmarc.${domain}`, 'TXT', ['v=DMARC1; p=reject']);
      expect((await api.post(`/domains/verify?id=${saved.id}`).expect(200)).body.message.domain.status).toBe('verified');

      const relay = kind === 'smtp'
        ? { name: 'Postfix', kind, url: relaySink!.url, domains: [domain] }
        : { name: kind, kind, api_key: emulator!.key, endpoint: emulator!.url, region: 'us-east-1', domains: [domain] };
      await api.post('/relays/save').send(relay).expect(200);

      const sender = await f.sender(account.user_id, { from_email: `news@${domain}` });
      const group = await f.group(account.user_id);
      const type = await addContactType(h, account, 'Readers');
      await f.contact(account.user_id, type, `ann@${kind}.example.org`, { first_name: 'Ann' });
      await f.singleSend(account.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }] });
      const { worker, close } = testWorker(h, instance.url);
      await worker.runOnce().finally(close);

      expect(instance.messages.filter((m) => m.to.includes(`ann@${kind}.example.org`))).toEqual([]);
      const [raw] = received();
      expect(received()).toHaveLength(1);
      const result = await authenticate(raw, { ip: '127.0.0.1', helo: 'relay.test', sender: `bounces@${domain}`, mta: 'mx.example.org', resolver: dns.resolve as never });
      const signatures = result.dkim!.results!.map((r) => [r.signingDomain, r.status.result]);
      expect(signatures).toEqual([[domain, 'pass']]);
      expect(result.dmarc && result.dmarc.status.result).toBe('pass');
      expect((result.dmarc as { domain?: string }).domain).toBe(domain);
    });
  });
});
