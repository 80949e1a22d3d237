import { boot, ensureDemoAccount } from './boot';
import { loadConfig } from './config';

/** `npm start`: migrate, seed, print the demo account on first start, serve. */
async function main(): Promise<void> {
  const config = loadConfig();
  const runtime = await boot(config);
  const { logger } = runtime;

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

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    server.close(() => {
      runtime.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
    setTimeout(() => process.exit(1), 10_000).unref();
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
