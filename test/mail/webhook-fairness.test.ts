import { createHookDeliverer, retryDelayMs } from '../../src/workers/hook-deliverer';
import { addContact, addContactType, countryId, manualClock } from '../support/fixtures';
import { useHarness, TestAccount } from '../support/harness';
import { failFirstTime, ReceiverOptions, startWebhookReceiver, WebhookReceiver } from '../support/webhook-receiver';

const SECOND = 1000;

describe('one account’s failing webhook endpoint does not hold up another’s', () => {
  const h = useHarness({ WEBHOOK_ALLOW_PRIVATE: '1' });
  const receivers: WebhookReceiver[] = [];
  afterAll(() => Promise.all(receivers.map((r) => r.close())));

  async function endpointFor(account: TestAccount, options: ReceiverOptions) {
    const receiver = await startWebhookReceiver(options);
    receivers.push(receiver);
    const saved = await h.api(account).post('/webhooks/save').send({ url: receiver.url, events: ['contact.created'] }).expect(200);
    receiver.secret = saved.body.message.webhook.secret;
    return receiver;
  }

  async function addContacts(account: TestAccount, count: number, prefix: string) {
    const type = await addContactType(h, account, `Type ${prefix}`);
    const country = await countryId(h, 'FR');
    for (let i = 0; i < count; i += 1) {
      await addContact(h, account, { contact_type_id: type, email: `${prefix}${i}@example.org`, first_name: 'F', last_name: 'L', country });
    }
  }

  test('when account A’s endpoint (the older one) fails every request for minutes then account B’s events and retries go out when due', async () => {
    const ann = await h.account();
    const ben = await h.account();
    let clock = manualClock();
    // Ann's endpoint answers 500 after 5 seconds, every time; the clock moves as the request takes its time.
    const failing = await endpointFor(ann, { answer: () => (clock.advance(5 * SECOND), 500) });
    // Ben's answers 500 to the first attempt and 200 to the retry; it notes when each request came.
    const benAt: number[] = [];
    const working = await endpointFor(ben, { answer: (id, seen) => (benAt.push(clock.now().getTime()), failFirstTime(id, seen)) });
    await addContacts(ann, 12, 'ann');
    await addContacts(ben, 1, 'ben');
    clock = manualClock(new Date());
    const start = clock.now().getTime();

    const deliverer = createHookDeliverer({ db: h.runtime.db, config: { webhookAllowPrivate: true }, logger: h.runtime.logger, secret: h.runtime.secret }, { now: clock.now });
    // Four simulated minutes of work: a round of Ann's 12 events takes longer than their first
    // retry delays, so hers are due again and again meanwhile.
    while (clock.now().getTime() - start < 4 * 60 * SECOND) {
      await deliverer.runOnce();
      clock.advance(5 * SECOND);
    }

    expect(failing.requests.length).toBeGreaterThan(24);
    expect(failing.accepted).toEqual([]);
    expect(working.events().map((e) => e.type)).toEqual(['contact.created']);
    expect(benAt).toHaveLength(2);
    // The first attempt went out while Ann's first request was in hand at most, the retry when it
    // was due (its longest delay, plus one request of Ann's in hand).
    expect(benAt[0] - start).toBeLessThanOrEqual(5 * SECOND);
    expect(benAt[1] - benAt[0]).toBeLessThanOrEqual(retryDelayMs(1, () => 1) + 5 * SECOND);
  });
});
