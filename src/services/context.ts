import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Db } from '../db';
import type { MailTransport } from '../mail/transport';
import type { AuditActorType } from '../lib/constants';

/** Who is asking: every service call is scoped to one account. */
export interface Ctx {
  userId: number;
  /** Who made the request, for the audit log; absent: the service itself (a worker, a schedule). */
  actor?: Actor;
  /** The client's address as TRUST_PROXY lets Express read it, for the audit log. */
  ip?: string | null;
}

/** The person or key behind a change, as the audit log names it. */
export interface Actor {
  type: AuditActorType;
  /** The user's or key's id; null for the account's original key pair and for the service. */
  id: number | null;
  name: string;
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
