import { simpleParser, ParsedMail } from 'mailparser';
import { SMTPServer, SMTPServerAddress, SMTPServerAuthentication, SMTPServerAuthenticationResponse, SMTPServerSession } from 'smtp-server';

export interface ReceivedMessage {
  from: string;
  to: string[];
  raw: string;
  parsed: ParsedMail;
  /** Taken, and then the connection was dropped without the final reply (see `dropAfterData`). */
  dropped?: boolean;
}

export interface SmtpSink {
  url: string;
  port: number;
  messages: ReceivedMessage[];
  /** Resolves once at least `count` messages have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMessage[]>;
  /**
   * Resolves once the sink has read what its connections already hold and recorded every
   * message that arrived whole: after a client is killed, its last messages are counted.
   */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  /** Return an SMTP error (e.g. `{ code: 451, message: 'try later' }`) to refuse a recipient. */
  onRecipient?: (address: string, session: SMTPServerSession) => { code: number; message: string } | undefined;
  /** Runs before each message is accepted: the sender waits for it, like a slow server. */
  beforeAccept?: (session: SMTPServerSession) => Promise<void>;
  /** Runs before each recipient is answered: the sender waits for it (holds a message before any of it arrives). */
  beforeRecipient?: () => Promise<void>;
  /** false: keep the raw message only (`parsed` is empty), for tests that count thousands of messages. */
  parse?: boolean;
  /**
   * true: the message is kept (as a server that queued it) and the connection is dropped
   * without the final reply, as a server that crashes or a network that fails at that moment.
   */
  dropAfterData?: (session: SMTPServerSession) => boolean;
  /**
   * true: the connection is dropped instead of answering the recipient, before any of the
   * message is sent (a server that crashes or a network that fails early); nothing is kept.
   */
  dropAtRecipient?: (address: string, session: SMTPServerSession) => boolean;
  /** A login the server takes (offered without TLS, as a local relay may): any other is refused (535). Absent: every login is refused. */
  login?: { user: string; pass: string };
}

/**
 * A real SMTP server in-process, bound to 127.0.0.1 on a free port; no reverse DNS lookups,
 * so nothing leaves the machine.
 */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const messages: ReceivedMessage[] = [];
  const waiters: Array<() => void> = [];
  // Once closing, a message whose data ends is refused (421) rather than recorded: a client that
  // never got the 250 must not find it delivered.
  let closing = false;
  // Messages whose data has ended and that are not yet recorded (or refused).
  let receiving = 0;
  const drop = (session: SMTPServerSession) => {
    // smtp-server keeps its connections (and their sockets) in a set of its own.
    const connections = (server as unknown as { connections: Set<{ session?: SMTPServerSession; _socket: { destroy(): void } }> }).connections;
    for (const connection of connections) if (connection.session?.id === session.id) connection._socket.destroy();
  };
  const server = new SMTPServer({
    disableReverseLookup: true,
    authOptional: true,
    ...(options.login
      ? {
          allowInsecureAuth: true,
          onAuth(auth: SMTPServerAuthentication, _session: SMTPServerSession, callback: (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse) => void) {
            const login = options.login!;
            if (auth.username === login.user && auth.password === login.pass) return callback(null, { user: login.user });
            callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
          },
        }
      : {}),
    disabledCommands: ['STARTTLS'],
    logger: false,
    // close() tells clients still connected that the server is going (421, as any server
    // shutting down does) instead of waiting for them to quit: the app under test keeps its
    // pooled connections open until its own close, which may come later.
    closeTimeout: 1,
    async onRcptTo(address: SMTPServerAddress, session, callback) {
      await options.beforeRecipient?.();
      if (options.dropAtRecipient?.(address.address, session)) return drop(session);
      const refusal = options.onRecipient?.(address.address, session);
      if (refusal) {
        const err = new Error(refusal.message) as Error & { responseCode: number };
        err.responseCode = refusal.code;
        return callback(err);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        receiving += 1;
        try {
          await receive();
        } finally {
          receiving -= 1;
        }
      });
      const receive = async () => {
        await options.beforeAccept?.(session);
        const raw = Buffer.concat(chunks).toString('utf8');
        const parsed = options.parse === false ? ({} as ParsedMail) : await simpleParser(raw);
        if (closing) {
          const err = new Error('Server shutting down') as Error & { responseCode: number };
          err.responseCode = 421;
          return callback(err);
        }
        const dropped = options.dropAfterData?.(session) ?? false;
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          parsed,
          ...(dropped ? { dropped } : {}),
        });
        waiters.splice(0).forEach((w) => w());
        if (dropped) return drop(session);
        callback();
      };
    },
  });
  // A client that vanishes (a worker killed in a test) resets its connection: not an error here.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    waitFor(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const deadline = setTimeout(() => reject(new Error(`expected ${count} messages, got ${messages.length}`)), timeoutMs);
        const check = () => {
          if (messages.length >= count) {
            clearTimeout(deadline);
            resolve(messages);
          } else {
            waiters.push(check);
          }
        };
        check();
      });
    },
    async settled() {
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      await turn();
      while (receiving > 0) await turn();
    },
    close: () => {
      closing = true;
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface FileSmtpSinkOptions extends SmtpSinkOptions {
  /** Empties `messages` before each test. */
  emptyBeforeEach?: boolean;
}

/**
 * One SMTP sink for the test file: started before its tests (in the beforeAll of the block it is
 * called in), closed after them. The handle reads the running sink, so use it inside hooks and
 * tests. For an app that mails through the sink itself, call this before `useHarness` and pass
 * `useHarness({ SMTP_URL: () => sink.url })`: hooks run in the order they are declared.
 */
export function useSmtpSink(options: FileSmtpSinkOptions = {}): SmtpSink {
  let sink: SmtpSink | undefined;
  const running = (): SmtpSink => {
    if (!sink) throw new Error('the SMTP sink starts in beforeAll: read it in a hook or a test, after useSmtpSink()');
    return sink;
  };
  beforeAll(async () => {
    sink = await startSmtpSink(options);
  });
  if (options.emptyBeforeEach) beforeEach(() => running().messages.splice(0));
  afterAll(() => sink?.close());
  return {
    get url() {
      return running().url;
    },
    get port() {
      return running().port;
    },
    get messages() {
      return running().messages;
    },
    waitFor: (count, timeoutMs) => running().waitFor(count, timeoutMs),
    settled: () => running().settled(),
    close: () => running().close(),
  };
}
