import { createMailTransport } from '../../src/mail/transport';
import { RelayRouter } from '../../src/services/delivery/relays';
import { useHarness } from '../support/harness';
import { useSmtpSink } from '../support/smtp';

describe('a relay\'s max rate across worker processes', () => {
  const sink = useSmtpSink();
  const h = useHarness({ RELAY_ALLOW_PRIVATE: '1' });

  test('when two workers send through the same relay then they share its rate: each message waits for the slot after the other\'s', async () => {
    const account = await h.account();
    await h.runtime.services.relays.save({ userId: account.user_id }, { name: 'Slow', kind: 'smtp', url: sink.url, api_key: null, region: null, endpoint: null, max_rate: 1, priority: 0, domains: [] });
    // The waits are recorded, not slept: each router stands for a worker process with its own memory.
    const waits: Array<[string, number]> = [];
    const instance = createMailTransport({ smtpUrl: sink.url, outboxDir: '', dkim: undefined });
    const router = (name: string) => new RelayRouter(h.runtime.db, h.runtime.secret, h.runtime.config, instance, async (ms) => void waits.push([name, ms]));
    const [a, b] = [router('a'), router('b')];
    const message = (n: number) => ({ from: 'news@acme.test', to: `r${n}@example.org`, subject: 'Hi', html: '<p>hi</p>' });
    try {
      await a.send(account.user_id, null, message(1));
      await b.send(account.user_id, null, message(2));
      await a.send(account.user_id, null, message(3));
      await b.send(account.user_id, null, message(4));
    } finally {
      a.close();
      b.close();
      instance.close();
    }
    expect(sink.messages).toHaveLength(4);
    // One message a second: the 2nd, 3rd and 4th reserved the slots 1, 2 and 3 seconds after the first.
    expect(waits.map(([name]) => name)).toEqual(['b', 'a', 'b']);
    const ms = waits.map(([, wait]) => wait);
    expect(ms[0]).toBeGreaterThan(0);
    expect(ms[1]).toBeGreaterThan(ms[0] + 500);
    expect(ms[2]).toBeGreaterThan(ms[1] + 500);
  });
});
