import { authenticate } from 'mailauth';
import { MESSAGE_KIND } from '../../src/lib/constants';
import { createDomainCheckJob } from '../../src/workers/domain-checks';
import { useHarness } from '../support/harness';
import { addContactType, header, manualClock, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import { signIn } from '../support/web';
import { startDnsServer, TestDnsServer } from '../support/dns';
import { bounceFixture, deliverRaw } from '../support/bounce-fixtures';
import { startBounceListener } from '../../src/workers/bounce-listener';

/** The records of a domain answer, by purpose. */
type DomainAnswer = { id: number; dkim_selector: string; status: string; last_checked_at: string | null; verified_at: string | null; records: Array<{ purpose: string; type: string; host: string; value: string; status: string; found: string | null }> };
const recordOf = (domain: DomainAnswer, purpose: string) => domain.records.find((r) => r.purpose === purpose)!;

describe('sending domains', () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(() => dns.close());
  const sink = useSmtpSink({ emptyBeforeEach: true });
  const h = useHarness({ DNS_SERVERS: () => dns.address, SMTP_URL: () => sink.url, BOUNCE_DOMAIN: 'bounces.campaigns.test', SPF_INCLUDE: '_spf.relay.test' });
  const f = sendingFixtures(h);
  const [alice] = h.accounts(1);

  /** Publishes every record the domain asks for, as its owner would. */
  function publish(domain: DomainAnswer) {
    for (const record of domain.records) dns.set(record.host, record.type as 'TXT', [record.value]);
  }

  test('when a domain is added then it is pending with its own DKIM key and the records to publish', async () => {
    const res = await h.api(alice).post('/domains/save').send({ domain: ' Pending.Acme.TEST ' }).expect(200);
    const domain = res.body.message.domain as DomainAnswer;
    expect(res.body.status).toBe('success');
    expect(domain).toMatchObject({ user_id: alice.user_id, domain: 'pending.acme.test', status: 'pending', last_checked_at: null, verified_at: null });
    expect(recordOf(domain, 'dkim')).toMatchObject({ type: 'TXT', host: `${domain.dkim_selector}._domainkey.pending.acme.test`, status: 'missing', found: null });
    expect(recordOf(domain, 'dkim').value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]{300,}$/);
    expect(recordOf(domain, 'spf')).toMatchObject({ type: 'TXT', host: 'pending.acme.test', value: 'v=spf1 include:_spf.relay.test ~all' });
    // The domain's page says what to add to an SPF record the domain already has: the same include.
    const page = await (await signIn(h, alice)).get(`/domains/${domain.id}`).expect(200);
    expect(page.text).toContain('If the domain already has an SPF record, add <code>include:_spf.relay.test</code> to it, before its closing <code>all</code>');
    expect(recordOf(domain, 'dmarc')).toMatchObject({ type: 'TXT', host: '_dmarc.pending.acme.test' });
    expect(recordOf(domain, 'return_path')).toMatchObject({ type: 'CNAME', host: 'bounces.pending.acme.test', value: 'bounces.campaigns.test' });
    // The private key never leaves: the database keeps it sealed.
    const row = await h.runtime.db('sending_domains').where({ id: domain.id }).first();
    expect(String(row.dkim_private_key_sealed)).toMatch(/^v1\./);
    expect(JSON.stringify(res.body)).not.toContain('PRIVATE KEY');

    const details = await h.api(alice).get(`/domains/details?id=${domain.id}`).expect(200);
    expect(details.body.message.domain).toEqual(domain);
    const list = await h.api(alice).get('/domains').expect(200);
    expect(list.body.message.domains.map((d: DomainAnswer) => d.id)).toContain(domain.id);
  });

  test('when a domain is not a domain name or is added twice then the answer says so', async () => {
    for (const bad of ['not a domain', 'http://acme.test/', 'acme', 'user@acme.test', '-acme.test']) {
      const res = await h.api(alice).post('/domains/save').send({ domain: bad }).expect(422);
      expect(res.body).toEqual({ status: 'failed', errors: { domain: ['The domain must be a domain name such as example.com.'] } });
    }
    await h.api(alice).post('/domains/save').send({ domain: 'twice.acme.test' }).expect(200);
    const again = await h.api(alice).post('/domains/save').send({ domain: 'TWICE.acme.test' }).expect(422);
    expect(again.body).toEqual({ status: 'failed', errors: { domain: ['The domain has already been taken.'] } });
    const missing = await h.api(alice).post('/domains/save').send({}).expect(422);
    expect(missing.body).toEqual({ status: 'failed', errors: { domain: ['The domain field is required.'] } });
  });

  test('when another account asks for a domain then it is not found', async () => {
    const bob = await h.account();
    const res = await h.api(alice).post('/domains/save').send({ domain: 'private.acme.test' }).expect(200);
    const id = res.body.message.domain.id;
    for (const call of [h.api(bob).get(`/domains/details?id=${id}`), h.api(bob).post(`/domains/verify?id=${id}`), h.api(bob).delete(`/domains/delete?id=${id}`)]) {
      expect((await call.expect(404)).body).toEqual({ status: 'failed', errors: 'Record Not Found' });
    }
    expect((await h.api(alice).delete(`/domains/delete?id=${id}`).expect(200)).body).toEqual({ status: 'success', message: 'Deleted Successfully' });
    await h.api(alice).get(`/domains/details?id=${id}`).expect(404);
  });

  test('when its records appear then it is verified, its mail passes DKIM and DMARC as that domain, and a daily check marks it failing when they go', async () => {
    const saved = (await h.api(alice).post('/domains/save').send({ domain: 'acme.test' }).expect(200)).body.message.domain as DomainAnswer;
    const sender = await f.sender(alice.user_id, { from_email: 'news@acme.test' });
    const other = await f.sender(alice.user_id, { from_email: 'news@elsewhere.test', nickname: 'other' });
    const statusOf = async () => Object.fromEntries((await h.api(alice).get('/senders').expect(200)).body.message.senders.map((s: { id: number; domain_status: string }) => [s.id, s.domain_status]));
    expect(await statusOf()).toMatchObject({ [sender]: 'unauthenticated', [other]: 'unauthenticated' });

    // Nothing published yet: still pending, every record missing.
    const before = (await h.api(alice).post(`/domains/verify?id=${saved.id}`).expect(200)).body.message.domain as DomainAnswer;
    expect(before.status).toBe('pending');
    expect(before.records.map((r) => r.status)).toEqual(['missing', 'missing', 'missing', 'missing']);
    expect(before.last_checked_at).not.toBeNull();

    // A wrong key at the selector is wrong, not verified.
    dns.set(recordOf(saved, 'dkim').host, 'TXT', ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrongwrongwrong']);
    dns.set('_dmarc.acme.test', 'TXT', ['v=DMARC1; p=reject']);
    const wrong = (await h.api(alice).post(`/domains/verify?id=${saved.id}`).expect(200)).body.message.domain as DomainAnswer;
    expect(wrong.status).toBe('pending');
    expect(recordOf(wrong, 'dkim')).toMatchObject({ status: 'wrong', found: expect.stringContaining('wrongwrong') });
    expect(recordOf(wrong, 'dmarc')).toMatchObject({ status: 'ok', found: 'v=DMARC1; p=reject' });

    publish(saved);
    dns.set('acme.test', 'TXT', ['v=spf1 ip4:127.0.0.1 include:_spf.relay.test -all']);
    // The bounce domain's own SPF, which its CNAME under acme.test shares.
    dns.set('bounces.campaigns.test', 'TXT', ['v=spf1 ip4:127.0.0.1 -all']);
    const verified = (await h.api(alice).post(`/domains/verify?id=${saved.id}`).expect(200)).body.message.domain as DomainAnswer;
    expect(verified.status).toBe('verified');
    expect(verified.records.map((r) => [r.purpose, r.status])).toEqual([['dkim', 'ok'], ['spf', 'ok'], ['dmarc', 'ok'], ['return_path', 'ok']]);
    expect(verified.verified_at).not.toBeNull();
    expect(await statusOf()).toMatchObject({ [sender]: 'verified', [other]: 'unauthenticated' });

    // A send from it: the message is signed d=acme.test and passes DMARC against the same DNS.
    const group = await f.group(alice.user_id);
    const customers = await addContactType(h, alice, 'Customers');
    await f.contact(alice.user_id, customers, 'ann@example.org', { first_name: 'Ann' });
    const sendId = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: customers }] });
    const w = testWorker(h, sink.url);
    try {
      await w.worker.runOnce();
    } finally {
      await w.close();
    }
    const [message] = await sink.waitFor(1);
    const result = await authenticate(message.raw, { ip: '127.0.0.1', helo: 'relay.test', sender: message.from, mta: 'mx.example.org', resolver: dns.resolve as never });
    const dkim = result.dkim!.results!.find((r) => r.signingDomain === 'acme.test');
    expect(dkim?.status.result).toBe('pass');
    expect(result.dmarc && result.dmarc.status.result).toBe('pass');
    expect((result.dmarc as { domain?: string }).domain).toBe('acme.test');
    // The envelope sender is under the domain's bounce subdomain, so SPF aligns as well.
    expect(message.from).toMatch(/^bounces\+[0-9a-z]+-[0-9a-f]{20}@bounces\.acme\.test$/);
    expect(result.spf && result.spf.status.result).toBe('pass');
    expect((result.dmarc as unknown as { alignment: { spf: { result: unknown } } }).alignment.spf.result).toBe('bounces.acme.test');
    // and a bounce to it reaches the listener.
    const listener = await startBounceListener({ config: h.runtime.config, feedback: h.runtime.services.feedback, logger: h.runtime.logger });
    try {
      await deliverRaw(listener.port, message.from, bounceFixture('postfix-user-unknown.eml', { verp: message.from, token: header(message.raw, 'X-Campaign-Message')!, recipient: 'ann@example.org' }));
      await expect(deliverRaw(listener.port, 'bounces+1-00000000000000000000@bounces.acme.test', 'Subject: x\r\n\r\nx\r\n')).rejects.toMatchObject({ responseCode: 550 });
    } finally {
      await listener.close();
    }
    expect((await h.runtime.services.suppressions.list({ userId: alice.user_id })).rows.map((r) => r.email_address)).toEqual(['ann@example.org']);
    expect(header(message.raw, 'List-Id')).toBe(`<g${group}.u${alice.user_id}.campaigns.test>`);
    expect(header(message.raw, 'Feedback-ID')).toMatch(new RegExp(`^s${sendId}:u${alice.user_id}:campaign:cm[0-9a-f]{10}$`));
    const signed = /\bh=([^;]+)/.exec(header(message.raw, 'DKIM-Signature') ?? '')?.[1].replace(/\s+/g, '').toLowerCase().split(':') ?? [];
    expect(signed).toEqual(expect.arrayContaining(['list-id', 'feedback-id', 'from', 'list-unsubscribe']));

    // The daily check: not due before a day has passed; a day later the DKIM record is gone.
    await h.api(alice).post('/notification-recipient/save').field('email_address', 'ops@acme-ops.test').field('email_owner', 'Ops').expect(200);
    const clock = manualClock(new Date());
    const job = createDomainCheckJob({ sendingDomains: h.runtime.services.sendingDomains, logger: h.runtime.logger }, { now: clock.now });
    dns.remove(recordOf(saved, 'dkim').host, 'TXT');
    clock.advance(3_600_000);
    expect(await job.runOnce()).toBe(0);
    expect((await h.api(alice).get(`/domains/details?id=${saved.id}`).expect(200)).body.message.domain.status).toBe('verified');
    clock.advance(24 * 3_600_000);
    expect(await job.runOnce()).toBe(1);
    const failing = (await h.api(alice).get(`/domains/details?id=${saved.id}`).expect(200)).body.message.domain as DomainAnswer;
    expect(failing.status).toBe('failing');
    expect(recordOf(failing, 'dkim')).toMatchObject({ status: 'missing', found: null });
    expect(await statusOf()).toMatchObject({ [sender]: 'failing' });
    const notices = await h.runtime.db('send_messages').where({ user_id: alice.user_id, kind: MESSAGE_KIND.system, email: 'ops@acme-ops.test' }).select('payload');
    expect(notices).toHaveLength(1);
    expect(JSON.parse(String(notices[0].payload)).subject).toBe('Sending domain failing: acme.test');
    // Checked again a day later, still failing: nobody is told twice.
    clock.advance(24 * 3_600_000);
    expect(await job.runOnce()).toBe(1);
    expect(Number((await h.runtime.db('send_messages').where({ user_id: alice.user_id, kind: MESSAGE_KIND.system, email: 'ops@acme-ops.test' }).count({ n: '*' }).first())?.n)).toBe(1);

    // The record is back: the next check verifies it again.
    publish(saved);
    clock.advance(24 * 3_600_000);
    expect(await job.runOnce()).toBe(1);
    expect((await h.api(alice).get(`/domains/details?id=${saved.id}`).expect(200)).body.message.domain.status).toBe('verified');
  });
});
