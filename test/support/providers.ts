import { TestAccount, Harness, useHarness } from './harness';
import { manualClock, sendingFixtures, testWorker } from './fixtures';
import { FileSmtpSinkOptions, SmtpSink, useSmtpSink } from './smtp';
import { startDnsServer, TestDnsServer } from './dns';

export interface ProviderWorld {
  /** The running DNS server (read it in hooks and tests). */
  readonly dns: TestDnsServer;
  sink: SmtpSink;
  h: Harness;
  f: ReturnType<typeof sendingFixtures>;
  /** The account the test sends from, filled in a beforeAll. */
  alice: TestAccount;
  clock: ReturnType<typeof manualClock>;
  /** One round of a test worker at the clock's time, sending to the sink. */
  run(): Promise<void>;
}

export interface ProviderWorldOptions {
  /** MX records beside the Gmail-like and Outlook-like domains (`name: ['preference host', ...]`). */
  mx?: Record<string, string[]>;
  sink?: FileSmtpSinkOptions;
  /** Environment beside DNS_SERVERS and SMTP_URL. */
  env?: Record<string, string>;
  /** The clock's start; by default an hour ahead of the wall clock. */
  start?: Date;
}

/**
 * A world of mailbox providers for the describe block: a real DNS server whose MX records put
 * `gmail-like.test` at Google and `outlook-like.test` at Microsoft, a real SMTP sink, a harness
 * resolving through that server, an account and a worker on a manual clock. Call it where
 * `useHarness` would be called; hooks run in the order they are declared, so the DNS server and
 * the sink run before the harness reads their addresses.
 */
export function useProviderWorld(options: ProviderWorldOptions = {}): ProviderWorld {
  let dns: TestDnsServer | undefined;
  beforeAll(async () => {
    dns = await startDnsServer();
    dns.set('gmail-like.test', 'MX', ['5 gmail-smtp-in.l.google.com']);
    dns.set('outlook-like.test', 'MX', ['10 outlook-like-test.mail.protection.outlook.com']);
    for (const [name, values] of Object.entries(options.mx ?? {})) dns.set(name, 'MX', values);
  });
  afterAll(() => dns?.close());
  const running = (): TestDnsServer => {
    if (!dns) throw new Error('the DNS server starts in beforeAll: read it in a hook or a test');
    return dns;
  };
  const sink = useSmtpSink(options.sink);
  const h = useHarness({ DNS_SERVERS: () => running().address, SMTP_URL: () => sink.url, ...options.env });
  const [alice] = h.accounts(1);
  const clock = manualClock(options.start ?? new Date(Date.now() + 3_600_000));
  return {
    get dns() {
      return running();
    },
    sink,
    h,
    f: sendingFixtures(h),
    alice,
    clock,
    async run() {
      const { worker, close } = testWorker(h, sink.url, { now: clock.now });
      await worker.runOnce().finally(close);
    },
  };
}
