import type { Server, ServerResponse } from 'node:http';
import net from 'node:net';
import { parseArgs } from 'node:util';
import { boot, ensureFirstAccount, Runtime } from './boot';
import { loadConfig } from './config';
import { PERMISSIONS } from './http/permissions';
import { createWorkerRuntime, WorkerRuntime } from './workers/worker-runtime';

type Role = 'web' | 'worker' | 'both' | 'inbound';

/**
 * `npm start` (web server and sending worker in one process), `npm run web`, `npm run worker`:
 * migrate, seed, then serve and/or send until SIGTERM or SIGINT.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { role: { type: 'string', default: 'both' } } });
  const role = values.role as Role;
  if (!['web', 'worker', 'both', 'inbound'].includes(role)) throw new Error(`--role must be web, worker, both or inbound, got "${role}"`);

  const servesHttp = role === 'web' || role === 'both';
  const config = loadConfig(process.env, servesHttp ? 'server' : 'worker');
  for (const warning of config.warnings) process.stderr.write(`Warning: ${warning}\n`);
  const runtime = await boot(config);
  const server = servesHttp ? await listen(runtime) : undefined;
  const sending = role === 'web' || role === 'inbound' ? undefined : createWorkerRuntime(runtime);
  sending?.worker.start();
  sending?.hooks.start();
  sending?.maintenance.start();
  sending?.domainChecks.start();
  sending?.heartbeat.start();
  if (role === 'worker') process.stdout.write(`Sending worker ${sending?.worker.owner} started\n`);
  // Bounces come back to the worker (or a process of their own with --role=inbound).
  const bounces = role === 'web' ? undefined : await startInbound(runtime, role === 'inbound' && !config.submission);
  // SMTP submission of transactional mail is inbound mail too: the both and inbound roles.
  const submission = role === 'both' || role === 'inbound' ? await startSubmission(runtime) : undefined;
  const inbound = bounces || submission ? { close: async () => void (await Promise.all([bounces?.close(), submission?.close()])) } : undefined;
  handleSignals(runtime, server, sending, inbound);
}

async function listen(runtime: Runtime): Promise<Server> {
  const { config } = runtime;
  const first = await ensureFirstAccount(runtime.services, config.admin);
  const server = runtime.app.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const lines = [`Campaign service listening on http://${config.host}:${port} (dashboard ${config.baseUrl}/, API ${config.baseUrl}/api/v1)`];
    if (first) {
      lines.push(
        '',
        first.password ? 'A demo account was created (shown only this once):' : 'The first account was created from ADMIN_EMAIL (keys shown only this once):',
        `  dashboard   ${config.baseUrl}/`,
        `  email       ${first.email}`,
        `  password    ${first.password ?? '(ADMIN_PASSWORD)'}`,
        `  PublicKey   ${first.public_key}`,
        `  SecretKey   ${first.secret_key}`,
        '',
        `  try: curl -H 'PublicKey: ${first.public_key}' -H 'SecretKey: ${first.secret_key}' ${config.baseUrl}/api/v1/contacts-type`,
      );
    }
    process.stdout.write(lines.join('\n') + '\n');
  });
  return server;
}

/** Where bounces come back: the SMTP listener (BOUNCE_SMTP_PORT) and the IMAP mailbox (BOUNCE_IMAP_URL). */
async function startInbound(runtime: Runtime, required: boolean): Promise<{ close(): Promise<void> } | undefined> {
  const { config, services, logger } = runtime;
  if (config.bounceSmtpPort === undefined && config.bounceImapUrl === undefined) {
    if (required) throw new Error('--role=inbound needs BOUNCE_SMTP_PORT (with BOUNCE_DOMAIN), BOUNCE_IMAP_URL or SUBMISSION_PORT');
    return undefined;
  }
  // Loaded only when configured: a web process never pays for the SMTP server and IMAP client.
  const listener = config.bounceSmtpPort === undefined
    ? undefined
    : await (await import('./workers/bounce-listener')).startBounceListener({ config, feedback: services.feedback, logger });
  if (listener) process.stdout.write(`Bounce listener on smtp://${config.bounceSmtpHost}:${listener.port} for bounces+…@${config.bounceDomain}\n`);
  const mailbox = config.bounceImapUrl === undefined
    ? undefined
    : (await import('./workers/bounce-mailbox')).createBounceMailbox({ config, feedback: services.feedback, logger });
  mailbox?.start();
  return { close: async () => void (await Promise.all([listener?.close(), mailbox?.stop()])) };
}

/** SMTP submission (SUBMISSION_PORT), when set: its certificate's fingerprint is printed for clients to pin. */
async function startSubmission(runtime: Runtime): Promise<{ close(): Promise<void> } | undefined> {
  const { config, services, logger, db } = runtime;
  if (!config.submission) return undefined;
  const { createSubmission } = await import('./services/transactional/submission');
  const submission = createSubmission({ db, accounts: services.accounts, transactional: services.transactional, senders: PERMISSIONS.transactional.write });
  const server = await (await import('./workers/submission-server')).startSubmissionServer({ config: { ...config, submission: config.submission }, submission, logger });
  process.stdout.write(`SMTP submission on smtp://${config.submission.host}:${server.port} (STARTTLS, certificate SHA-256 ${server.fingerprint})\n`);
  return server;
}

/**
 * Stops taking requests and claiming mail, finishes what is in hand within SHUTDOWN_SECONDS,
 * then exits 0; what is still running then is cut off with exit code 1.
 */
function handleSignals(runtime: Runtime, server: Server | undefined, sending: WorkerRuntime | undefined, inbound?: { close(): Promise<void> }): void {
  let stopping = false;
  const drain = server ? drainOnStop(server) : undefined;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    runtime.logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      runtime.logger.error({ signal, seconds: runtime.config.shutdownMs / 1000 }, 'shutdown took longer than SHUTDOWN_SECONDS: forced out');
      process.exit(1);
    }, runtime.config.shutdownMs).unref();
    Promise.all([drain?.(), sending?.close(), inbound?.close()])
      .then(() => runtime.close())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          runtime.logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/**
 * Returns the server's stop: it stops accepting connections and answers every request still in
 * hand, or arriving on a connection that is still open, with `Connection: close`, so that each
 * connection ends after its answer. A client then learns from an answer that it must reconnect,
 * and no request sent on an open connection is reset. A connection its client leaves idle ends
 * at the keep-alive timeout, which Node announces in each answer (`Keep-Alive: timeout=5`) and its
 * clients leave before. Resolves once the last connection has closed.
 *
 * Not `server.close()`: http.Server's also destroys the connections that look idle at that moment,
 * and on a busy event loop (SQLite's queries hold it) one of them may carry a request the server
 * has not read yet, whose client then sees the connection reset. net.Server's close only stops
 * the listening. (`closeIdleConnections()` has the same flaw.)
 */
function drainOnStop(server: Server): () => Promise<void> {
  let stopping = false;
  const inHand = new Set<ServerResponse>();
  const closeAfter = (res: ServerResponse) => {
    // An answer whose headers left before the stop leaves its connection open: its next request
    // gets the header, or the keep-alive timeout ends it.
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  // First, so the header is set before the app can answer.
  server.prependListener('request', (_req, res: ServerResponse) => {
    if (stopping) return closeAfter(res);
    inHand.add(res);
    res.once('close', () => inHand.delete(res));
  });
  return () => {
    stopping = true;
    const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
    for (const res of inHand) closeAfter(res);
    return closed;
  };
}

main().catch((err) => {
  // Keep the first line only: a failed query's message carries its whole SQL.
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0].slice(0, 500);
  process.stderr.write(`Failed to start: ${message}\n`);
  process.exit(1);
});
