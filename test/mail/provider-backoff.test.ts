import { MESSAGE_STATE } from '../../src/lib/constants';
import { useProviderWorld } from '../support/providers';
import { signIn } from '../support/web';

/**
 * Backoff per provider: a real SMTP sink defers the Gmail-hosted recipients with 421 4.7.28 for
 * a while; the worker slows Gmail only, and its messages wait without using up their attempts.
 */
describe('backoff when a provider defers for the sender\'s volume', () => {
  let gmailDeferring = true;
  const { sink, h, f, alice, clock, run } = useProviderWorld({
    sink: {
      onRecipient: (address) =>
        gmailDeferring && address.endsWith('@gmail-like.test')
          ? { code: 421, message: '4.7.28 Gmail has detected an unusual rate of unsolicited mail originating from your SPF domain' }
          : undefined,
    },
    // Two attempts at most: three rounds of throttling would fail every Gmail message if they counted.
    env: { SEND_MAX_ATTEMPTS: '2', SEND_RETRY_SECONDS: '60' },
  });
  const gmailRows = async (sendId: number) => (await f.ledger(sendId)).filter((r) => String(r.email).endsWith('@gmail-like.test'));
  const throttle = async () => h.runtime.db('provider_throttles').where({ provider: 'google' }).first();

  test('when Gmail defers with 421 4.7.28 then only Gmail slows and waits, doubling, its messages are never failed, and it climbs back after deliveries', async () => {
    const { sender, group, type } = await f.basics(alice, 'Everyone');
    const gmail = Array.from({ length: 12 }, (_, i) => `g${i}@gmail-like.test`);
    const outlook = Array.from({ length: 12 }, (_, i) => `o${i}@outlook-like.test`);
    for (const email of [...gmail, ...outlook]) await f.contact(alice.user_id, type, email);
    const send = await f.singleSend(alice.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], dueAt: clock.now() });

    await run();
    // Outlook's recipients went at full speed; Gmail's wait, none of them attempted for good.
    expect(sink.messages.flatMap((m) => m.to).sort()).toEqual([...outlook].sort());
    let rows = await gmailRows(send);
    const byEmail = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
    expect(rows.map((r) => [r.email, r.state, Number(r.attempts), Number(r.attempts) ? r.last_error : null]).sort(byEmail)).toEqual(gmail.map((email) => [email, MESSAGE_STATE.queued, 0, null]).sort(byEmail));
    const first = await throttle();
    expect(first).toMatchObject({ level: 1, backoff_ms: 60_000, last_code: '4.7.28' });
    const firstWait = new Date(first.wait_until).getTime() - clock.now().getTime();
    expect(firstWait).toBeGreaterThanOrEqual(60_000);
    expect(firstWait).toBeLessThanOrEqual(75_000);
    // Before the wait is over nothing to Gmail is tried.
    clock.advance(30_000);
    await run();
    expect(await throttle()).toMatchObject({ level: 1 });

    // Still deferring after the wait: slower again, twice as long a wait.
    clock.advance(50_000);
    await run();
    expect(await throttle()).toMatchObject({ level: 2, backoff_ms: 120_000 });
    clock.advance(160_000);
    await run();
    expect(await throttle()).toMatchObject({ level: 3, backoff_ms: 240_000 });
    rows = await gmailRows(send);
    expect(rows.filter((r) => r.state !== MESSAGE_STATE.queued)).toEqual([]);
    expect(Math.max(...rows.map((r) => Number(r.attempts)))).toBe(0);

    // The send's report says so in plain words, beside its figures per provider.
    const web = await signIn(h, alice);
    const page = (await web.agent.get(`/single-sends/${String((await f.send(send)).utr)}`).expect(200)).text;
    expect(page).toMatch(/Gmail is deferring: sending to it slowed since (\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}/);
    expect(page).toContain('By mailbox provider');
    expect(page).toContain('4.7.28');

    gmailDeferring = false;
    clock.advance(300_000);
    await run();
    rows = await gmailRows(send);
    expect(rows.map((r) => r.state)).toEqual(gmail.map(() => MESSAGE_STATE.sent));
    expect(await f.send(send)).toMatchObject({ delivered: 24, failed: 0 });
    // Twelve deliveries: two steps back up.
    expect(await throttle()).toMatchObject({ level: 1 });
    // Each throttled try was counted as a deferral of its message.
    const deferrals = await h.runtime.db('message_deferrals').whereIn('message_id', rows.map((r) => Number(r.id))).count({ n: '*' }).first();
    expect(Number(deferrals?.n)).toBeGreaterThanOrEqual(3);
  });
});
