import { MESSAGE_STATE } from '../../src/lib/constants';
import { useHarness } from '../support/harness';
import { manualClock, sendingFixtures, testWorker } from '../support/fixtures';
import { useSmtpSink } from '../support/smtp';

/** INSTANCE_BOUNCE_LIST: a hard bounce in one account spares every account the address for 30 days. */
describe.each([
  ['on', '1'],
  ['off', '0'],
])('the instance\'s bounce list %s', (state, flag) => {
  const on = state === 'on';
  // The recipients the sink was asked to take, in order (a skipped address is never asked for).
  const asked: string[] = [];
  const sink = useSmtpSink({
    onRecipient: (address) => {
      asked.push(address);
      return address.startsWith('gone@') ? { code: 550, message: '5.1.1 <gone@shared.test>: No such user' } : undefined;
    },
  });
  const h = useHarness({ SMTP_URL: () => sink.url, SEND_MAX_ATTEMPTS: '1', INSTANCE_BOUNCE_LIST: flag });
  const f = sendingFixtures(h);
  const [a, b] = h.accounts(2);
  const clock = manualClock(new Date(Date.now() + 60_000));

  let sends = 0;
  async function sendTo(account: typeof a, emails: string[]): Promise<Array<Record<string, unknown>>> {
    const { sender, group, type } = await f.basics(account, `List ${++sends}`);
    for (const email of emails) {
      // A contact sent to before moves to the new list.
      const moved = await h.runtime.db('contacts').where({ user_id: account.user_id, email_key: email }).update({ contact_type_id: type });
      if (!moved) await f.contact(account.user_id, type, email);
    }
    const send = await f.singleSend(account.user_id, { senderId: sender, groupId: group, to: [{ contactType: type }], dueAt: clock.now() });
    const { worker, close } = testWorker(h, sink.url, { now: clock.now });
    await worker.runOnce().finally(close);
    return f.ledger(send);
  }
  const row = (rows: Array<Record<string, unknown>>, email: string) => rows.find((r) => r.email === email)!;

  test(`when account A's message hard-bounces then account B's send ${on ? 'skips the address for 30 days, naming no account' : 'still tries it'}`, async () => {
    const first = await sendTo(a, ['gone@shared.test', 'here@shared.test']);
    expect(row(first, 'gone@shared.test')).toMatchObject({ state: MESSAGE_STATE.bounced, bounce_class: 'hard' });

    // Only a keyed hash is kept: neither the address nor its account can be read from the list.
    const listed = await h.runtime.db('instance_bounces').select('*');
    expect(listed).toHaveLength(on ? 1 : 0);
    if (on) {
      expect(Object.keys(listed[0]).sort()).toEqual(['address_hash', 'bounced_at']);
      expect(JSON.stringify(listed)).not.toContain('gone');
    }

    asked.length = 0;
    clock.advance(29 * 86_400_000);
    const second = await sendTo(b, ['gone@shared.test', 'other@shared.test']);
    expect(row(second, 'other@shared.test').state).toBe(MESSAGE_STATE.sent);
    if (on) {
      expect(row(second, 'gone@shared.test')).toMatchObject({ state: MESSAGE_STATE.suppressed, last_error: 'on the instance\'s bounce list (a hard bounce in the last 30 days)' });
      expect(asked).toEqual(['other@shared.test']);
    } else {
      expect(row(second, 'gone@shared.test')).toMatchObject({ state: MESSAGE_STATE.bounced, bounce_class: 'hard' });
      expect(asked.sort()).toEqual(['gone@shared.test', 'other@shared.test']);
    }
    // B's own list learnt nothing from A: its report would otherwise show A's contact.
    const bSuppressed = await h.runtime.db('suppressed_addresses').where({ user_id: b.user_id }).select('email_key');
    expect(bSuppressed.map((r) => r.email_key)).toEqual(on ? [] : ['gone@shared.test']);

    if (!on) return;
    // 30 days after A's bounce the address is tried again.
    asked.length = 0;
    clock.advance(2 * 86_400_000);
    const third = await sendTo(b, ['gone@shared.test']);
    expect(asked).toEqual(['gone@shared.test']);
    expect(row(third, 'gone@shared.test')).toMatchObject({ state: MESSAGE_STATE.bounced, bounce_class: 'hard' });
  });
});
