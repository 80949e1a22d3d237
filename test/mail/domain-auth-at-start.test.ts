import { authenticate } from 'mailauth';
import { insertId, nowValue } from '../../src/db/dialect';
import { AUTOMATION_STATUS, MESSAGE_KIND, MESSAGE_STATE, SINGLE_SEND_STATUS } from '../../src/lib/constants';
import { runAutomations } from '../../src/services/campaigns/enrolment';
import { useHarness } from '../support/harness';
import { addContactType, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';
import { startDnsServer, TestDnsServer } from '../support/dns';
import { signIn } from '../support/web';

type DomainAnswer = { id: number; status: string; records: Array<{ purpose: string; host: string; type: string; value: string }> };

describe('REQUIRE_DOMAIN_AUTH when the worker starts a send or an automation step', () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(() => dns.close());
  const sink = useSmtpSink();
  const h = useHarness({ DNS_SERVERS: () => dns.address, SMTP_URL: () => sink.url, REQUIRE_DOMAIN_AUTH: '1' });
  const f = sendingFixtures(h);
  const [alice] = h.accounts(1);

  beforeAll(async () => {
    await insertId(h.runtime.db, 'notification_recipients', {
      user_id: alice.user_id, email_address: 'boss@example.org', email_key: 'boss@example.org', email_owner: 'Boss', created_at: nowValue(), updated_at: nowValue(),
    });
  });

  const publish = (domain: DomainAnswer) => {
    for (const record of domain.records) dns.set(record.host, record.type as 'TXT', [record.value]);
    dns.set(`_dmarc.${domain.records[0].host.split('._domainkey.')[1]}`, 'TXT', ['v=DMARC1; p=none']);
  };
  const verify = async (id: number) => ((await h.api(alice).post(`/domains/verify?id=${id}`).expect(200)).body.message.domain as DomainAnswer).status;
  const addDomain = async (name: string) => {
    const domain = (await h.api(alice).post('/domains/save').send({ domain: name }).expect(200)).body.message.domain as DomainAnswer;
    publish(domain);
    expect(await verify(domain.id)).toBe('verified');
    return domain;
  };
  const statusOf = async (sendId: number) => Number((await f.send(sendId)).status);
  const notices = async (start = 'Single send paused') =>
    (await h.runtime.db('send_messages').where({ user_id: alice.user_id, kind: MESSAGE_KIND.system, email: 'boss@example.org' }).orderBy('id').select('payload'))
      .map((r) => JSON.parse(String(r.payload)) as { subject: string; text: string })
      .filter((m) => m.subject.startsWith(start));
  const systemEntries = async (action: string) => {
    const log = (await h.api(alice).get(`/audit-log?actor=system&action=${action}`).expect(200)).body.message.auditLog as Array<{ actor: { type: string; name: string }; record_id: string; summary: string }>;
    return log;
  };
  const run = async () => {
    const { worker, close } = testWorker(h, sink.url);
    await worker.runOnce().finally(close);
  };

  test('when a scheduled send\'s domain stopped being verified before it was due then the worker pauses it, sends nothing and says why; verified again and resumed, it goes out signed', async () => {
    const acme = await addDomain('acme.test');
    await addDomain('fine.test');
    const group = await f.group(alice.user_id);
    const type = await addContactType(h, alice, 'Readers');
    await f.contact(alice.user_id, type, 'ann@example.org', { first_name: 'Ann' });
    const acmeSender = await f.sender(alice.user_id, { from_email: 'news@acme.test' });
    const fineSender = await f.sender(alice.user_id, { from_email: 'news@fine.test', nickname: 'fine' });
    // Both scheduled while their domains were verified; the acme one is due first.
    const refused = await f.singleSend(alice.user_id, { senderId: acmeSender, groupId: group, to: [{ contactType: type }], subject: 'From acme', dueAt: new Date(Date.now() - 60_000) });
    const fine = await f.singleSend(alice.user_id, { senderId: fineSender, groupId: group, to: [{ contactType: type }], subject: 'From fine', dueAt: new Date(Date.now() - 30_000) });

    // Then acme.test's DKIM record goes.
    const dkimHost = acme.records.find((r) => r.purpose === 'dkim')!.host;
    dns.remove(dkimHost, 'TXT');
    expect(await verify(acme.id)).toBe('failing');

    await run();
    expect(await statusOf(refused)).toBe(SINGLE_SEND_STATUS.paused);
    expect((await f.send(refused)).pause_reason).toBe('unauthenticated');
    // Its page names the domain and the record that went.
    const pause = await h.runtime.services.sendInsights.pauseOf({ userId: alice.user_id }, refused);
    expect(pause).toMatchObject({ reason: 'unauthenticated', failed: 0, example: null, domain: { id: acme.id, domain: 'acme.test', status: 'failing' } });
    expect(pause!.domain!.records.filter((r) => r.status !== 'ok').map((r) => r.purpose)).toEqual(['dkim']);
    expect(await f.ledger(refused)).toEqual([]);
    // The other send is not held up by it.
    expect(await statusOf(fine)).toBe(SINGLE_SEND_STATUS.completed);
    const toAnn = () => sink.messages.filter((m) => m.to.includes('ann@example.org'));
    expect(toAnn().map((m) => m.parsed.subject)).toEqual(['From fine']);
    const [notice, ...more] = await notices();
    expect(more).toEqual([]);
    expect(notice.subject).toBe('Single send paused: November news is from an unauthenticated domain');
    expect(notice.text).toContain('news@acme.test is not in a verified sending domain');
    expect(notice.text).toContain('resume the send');
    const refusedUtr = String((await f.send(refused)).utr);
    expect(await systemEntries('single_send.paused')).toEqual([expect.objectContaining({ actor: expect.objectContaining({ type: 'system' }), record_id: refusedUtr })]);

    // Resumed while the domain still fails: paused again at once.
    await h.api(alice).get(`/single/send/resume?utr=${String((await f.send(refused)).utr)}`).expect(200);
    await run();
    expect(await statusOf(refused)).toBe(SINGLE_SEND_STATUS.paused);
    expect(await notices()).toHaveLength(2);

    // The record is back: verified, resumed, it goes out signed by acme.test.
    publish(acme);
    expect(await verify(acme.id)).toBe('verified');
    await h.api(alice).get(`/single/send/resume?utr=${String((await f.send(refused)).utr)}`).expect(200);
    await run();
    expect(await statusOf(refused)).toBe(SINGLE_SEND_STATUS.completed);
    expect(toAnn().map((m) => m.parsed.subject)).toEqual(['From fine', 'From acme']);
    const sent = toAnn()[1];
    const result = await authenticate(sent.raw, { ip: '127.0.0.1', helo: 'relay.test', sender: sent.from, mta: 'mx.example.org', resolver: dns.resolve as never });
    expect(result.dkim!.results!.map((r) => [r.signingDomain, r.status.result])).toEqual([['acme.test', 'pass']]);
  });

  test('when a live automation\'s sender domain stops being verified then the worker pauses it with its emails held, tells the notification recipients once, says why on its page and in the audit log; verified and set live again, the held email goes out', async () => {
    const steps = await addDomain('steps.test');
    const group = await f.group(alice.user_id);
    const type = await addContactType(h, alice, 'Journey');
    await f.contact(alice.user_id, type, 'bea@example.org', { first_name: 'Bea' });
    const sender = await f.sender(alice.user_id, { from_email: 'hello@steps.test', nickname: 'steps' });
    const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: group });
    await f.schedule(alice.user_id, automation, { senderId: sender, subject: 'Welcome aboard', waitingPeriod: 0, waitingType: 'instantly' });
    const utr = String((await f.automationRecord(automation)).utr);
    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);
    // A pass over the automations queued Bea's email while the domain was verified ...
    await runAutomations(h.runtime.db, new Date());
    const rows = () => h.runtime.db('send_messages').where({ automation_id: automation }).select('state', 'email');
    expect(await rows()).toEqual([expect.objectContaining({ state: MESSAGE_STATE.queued, email: 'bea@example.org' })]);

    // ... then the DKIM record went before the worker sent it.
    dns.remove(steps.records.find((r) => r.purpose === 'dkim')!.host, 'TXT');
    expect(await verify(steps.id)).toBe('failing');
    const fromSteps = () => sink.messages.filter((m) => m.from === 'hello@steps.test' || m.parsed.from?.text.includes('hello@steps.test'));

    await run();
    expect(Number((await f.automationRecord(automation)).status)).toBe(AUTOMATION_STATUS.paused);
    expect(fromSteps()).toEqual([]);
    // Held, not dropped nor failed.
    expect(await rows()).toEqual([expect.objectContaining({ state: MESSAGE_STATE.queued })]);
    const [notice, ...more] = await notices('Automation paused');
    expect(more).toEqual([]);
    expect(notice.subject).toBe('Automation paused: custom journey sends from an unauthenticated domain');
    expect(notice.text).toContain('the From address hello@steps.test of its emails is not in a verified sending domain');
    const web = await signIn(h, alice);
    const page = (await web.get(`/automations/${utr}`).expect(200)).text;
    expect(page).toContain('Paused by the service: the domain of hello@steps.test is not a verified sending domain of your account');
    expect(await systemEntries('automation.paused')).toEqual([expect.objectContaining({ actor: expect.objectContaining({ type: 'system' }), record_id: utr })]);

    // Another pass: still paused, nothing more said (not even the usual pause notice).
    await run();
    expect(await notices('Automation paused')).toHaveLength(1);
    expect(fromSteps()).toEqual([]);

    // Set live while the domain still fails: refused, as before.
    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(422);

    // Verified again and set live: the held email goes out and the page no longer says why it was paused.
    publish(steps);
    expect(await verify(steps.id)).toBe('verified');
    await h.api(alice).get(`/automations/set-live?utr=${utr}`).expect(200);
    await run();
    expect(await rows()).toEqual([expect.objectContaining({ state: MESSAGE_STATE.sent })]);
    expect(sink.messages.filter((m) => m.to.includes('bea@example.org')).map((m) => m.parsed.subject)).toEqual(['Welcome aboard']);
    expect((await web.get(`/automations/${utr}`).expect(200)).text).not.toContain('Paused by the service');
  });

  test('when one of two live automations of an account sends from a domain that stopped being verified then a pass pauses that one only and the other sends', async () => {
    await addDomain('kept.test');
    const lost = await addDomain('lost.test');
    const group = await f.group(alice.user_id);
    const type = await addContactType(h, alice, 'Pair');
    await f.contact(alice.user_id, type, 'cy@example.org', { first_name: 'Cy' });
    const liveAutomation = async (fromEmail: string, subject: string) => {
      const sender = await f.sender(alice.user_id, { from_email: fromEmail, nickname: subject });
      const automation = await f.automation(alice.user_id, { type: 'custom', contactType: type, groupId: group });
      await f.schedule(alice.user_id, automation, { senderId: sender, subject, waitingPeriod: 0, waitingType: 'instantly' });
      await h.api(alice).get(`/automations/set-live?utr=${String((await f.automationRecord(automation)).utr)}`).expect(200);
      return automation;
    };
    const kept = await liveAutomation('hello@kept.test', 'From kept');
    const gone = await liveAutomation('hello@lost.test', 'From lost');
    dns.remove(lost.records.find((r) => r.purpose === 'dkim')!.host, 'TXT');
    expect(await verify(lost.id)).toBe('failing');

    await run();
    expect(Number((await f.automationRecord(kept)).status)).toBe(AUTOMATION_STATUS.live);
    expect(Number((await f.automationRecord(gone)).status)).toBe(AUTOMATION_STATUS.paused);
    expect(sink.messages.filter((m) => m.to.includes('cy@example.org')).map((m) => m.parsed.subject)).toEqual(['From kept']);
    expect((await notices('Automation paused')).filter((m) => m.text.includes('hello@lost.test'))).toHaveLength(1);
  });
});
