import type { Logger } from 'pino';
import type { Config } from '../config';
import type { Db } from '../db';
import type { RouteEffect, TeamRole } from '../lib/constants';
import type { MailTransport } from '../mail/transport';

/**
 * Who made a request, within its account:
 * - `user`: a person signed in to the dashboard; `id` is `team_users.id`.
 * - `api_key`: a key pair; `id` is `api_keys.id`, or null for the account's original pair
 *   (PublicKey/SecretKey on the account), which acts as the owner.
 * - `system`: the service itself (workers, maintenance); `id` is null.
 */
export interface Actor {
  type: 'user' | 'api_key' | 'system';
  id: number | null;
  /** What a person reads in a list of who did what: the user's name, the key's name. */
  name: string;
  role: TeamRole;
}

/**
 * Who is asking: every service call is scoped to one account (`userId`, the account id as in the
 * reference). `actor` says which person or key of the account asked; calls made by the service
 * itself leave it out.
 */
export interface Ctx {
  userId: number;
  actor?: Actor;
  /** The client's address as TRUST_PROXY lets Express read it, for the audit log. */
  ip?: string | null;
  /** The route the request came through, when it came through one (the audit log holds the route to what it declares). */
  route?: RouteScope;
}

/**
 * A request's route as its route table registered it: what it declares it does, and the audit
 * entries recorded while it ran (a read records none; a change or an export one).
 */
export interface RouteScope {
  /** `METHOD /path` as registered. */
  name: string;
  effect: RouteEffect;
  recorded: string[];
}

/** The actor of work the service does by itself. */
export const SYSTEM_ACTOR: Actor = { type: 'system', id: null, name: 'System', role: 'owner' };

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
