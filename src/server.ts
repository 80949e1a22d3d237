import type { Server } from 'node:http';
import { parseArgs } from 'node:util';
import { boot, ensureDemoAccount, Runtime } from './boot';
import { loadConfig } from './config';
import { createWorkerRuntime, WorkerRuntime } from './mail/worker-runtime';

type Role = 'web' | 'worker' | 'both';

/**
 * `npm start` (web server and sending worker in one process), `npm run web`, `npm run worker`:
 * migrate, seed, then serve and/or send until SIGTERM or SIGINT.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { role: { type: 'string', default: 'both' } } });
  const role = values.role as Role;
  if (!['web', 'worker', 'both'].includes(role)) throw new Error(`--role must be web, worker or both, got "${role}"`);

  const config = loadConfig();
  const runtime = await boot(config);
  const server = role === 'worker' ? undefined : await listen(runtime);
  const sending = role === 'web' ? undefined : createWorkerRuntime(runtime);
  sending?.worker.start();
  if (role === 'worker') process.stdout.write(`Sending worker ${sending?.worker.owner} started\n`);
  handleSignals(runtime, server, sending);
}

async function listen(runtime: Runtime): Promise<Server> {
  const { config } = runtime;
  const demo = await ensureDemoAccount(runtime.services);
  const server = runtime.app.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const lines = [`Campaign service listening on http://${config.host}:${port} (dashboard ${config.baseUrl}/, API ${config.baseUrl}/api/v1)`];
    if (demo) {
      lines.push(
        '',
        'A demo account was created (shown only this once):',
        `  dashboard   ${config.baseUrl}/`,
        `  email       ${demo.email}`,
        `  password    ${demo.password}`,
        `  PublicKey   ${demo.public_key}`,
        `  SecretKey   ${demo.secret_key}`,
        '',
        `  try: curl -H 'PublicKey: ${demo.public_key}' -H 'SecretKey: ${demo.secret_key}' ${config.baseUrl}/api/v1/contacts-type`,
      );
    }
    process.stdout.write(lines.join('\n') + '\n');
  });
  return server;
}

/** Stops taking requests and claiming mail, finishes what is in hand, then exits. */
function handleSignals(runtime: Runtime, server: Server | undefined, sending: WorkerRuntime | undefined): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    runtime.logger.info({ signal }, 'shutting down');
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    Promise.all([closed, sending?.close()])
      .then(() => runtime.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
    setTimeout(() => process.exit(1), 30_000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err) => {
  // Keep the first line only: a failed query's message carries its whole SQL.
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0].slice(0, 500);
  process.stderr.write(`Failed to start: ${message}\n`);
  process.exit(1);
});
