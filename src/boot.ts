import type { Express } from 'express';
import type * as AppModule from './app';
import type { Logger } from 'pino';
import type { Config } from './config';
import { createDb, Db } from './db';
import { MIGRATION_NAMES, migrateAndSeed } from './migrate';
import { createLogger } from './logger';
import { createMailTransport, MailTransport } from './mail/transport';
import { createServices, Services } from './services';
import { ensureAppSecret } from './services/accounts/app-secret';
import type { CreatedAccount } from './services/accounts/accounts';
import { DEMO_ACCOUNT_EMAIL } from './lib/constants';
import { lazy } from './lib/lazy';

export interface Runtime {
  config: Config;
  db: Db;
  logger: Logger;
  mail: MailTransport;
  services: Services;
  /** HMAC secret for tokens in links. */
  secret: string;
  /** The HTTP app, built on first use: a worker process never loads Express, the API or the dashboard. */
  readonly app: Express;
  close(): Promise<void>;
}

/** Connects, migrates, seeds and wires the whole service (no listening, no timers). */
export async function boot(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<Runtime> {
  const db = createDb(config);
  await migrateAndSeed(db);
  const secret = await ensureAppSecret(db, config.appSecret, config.appSecretFile);
  const mail = createMailTransport(config, logger);
  const services = createServices({ db, config, logger, mail, secret, migrationNames: MIGRATION_NAMES });
  const app = lazy(() => (require('./app') as typeof AppModule).createApp({ config, services, logger }));
  return {
    config,
    db,
    logger,
    mail,
    services,
    secret,
    get app() {
      return app();
    },
    async close() {
      await services.importJobs.drain();
      mail.close();
      await db.destroy();
    },
  };
}

/**
 * On an empty database, creates the first account and returns its credentials (once): the
 * operator's own when ADMIN_EMAIL and ADMIN_PASSWORD are set (no password in the answer, they
 * chose it), else the demo account with a generated password.
 */
export async function ensureFirstAccount(services: Services, admin: Config['admin']): Promise<CreatedAccount | undefined> {
  if ((await services.accounts.count()) > 0) return undefined;
  if (admin) return services.accounts.create({ email: admin.email, password: admin.password, starter: true });
  return services.accounts.create({ email: DEMO_ACCOUNT_EMAIL, name: 'Demo', starter: true });
}
