import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Db } from '../db';
import type { MailTransport } from '../mail/transport';

/** Who is asking: every service call is scoped to one account. */
export interface Ctx {
  userId: number;
}

/** What services are built from, in the composition root (src/services/index.ts). */
export interface ServiceDeps {
  db: Db;
  config: Config;
  logger: Logger;
  /** The one way out for mail, built once in boot.ts and closed in Runtime.close(). */
  mail: MailTransport;
  /** HMAC secret for tokens in links (APP_SECRET, or generated once and stored). */
  secret: string;
  /** This build's migrations in order (boot passes them: services cannot import migrations/). */
  migrationNames?: readonly string[];
}
