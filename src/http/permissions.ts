import { RouteEffect, TEAM_ROLES, TeamRole } from '../lib/constants';
import { ForbiddenError } from '../lib/errors';

/**
 * Who may do what: the one declaration the API's route table, the dashboard's route table and
 * pages, and the OpenAPI document all read (docs/team-and-roles.md prints it).
 *
 * The service is cut into areas. Each area names the roles that may read it and the roles
 * that may change it, and the path prefixes it covers on each face (the longest matching
 * prefix wins, at a `/` boundary). A GET reads and any other method changes, unless the route
 * says otherwise where it is registered (its `effect`: a GET that changes or exports, a POST that
 * only reads; READS_BY_POST lists the older POST reads). Both route tables look every route up
 * when it is registered, so a route no area covers stops the start with its path.
 *
 * What a route declares is also held to: a route registered as a read that records a change in
 * the audit log fails (src/services/accounts/audit-log.ts), so a GET that changes something
 * cannot be served as a read, and the permission test walks every route by its declaration.
 */

const EVERYONE: readonly TeamRole[] = TEAM_ROLES;
const EDITORS: readonly TeamRole[] = ['owner', 'admin', 'editor'];
const ADMINS: readonly TeamRole[] = ['owner', 'admin'];
const OWNER: readonly TeamRole[] = ['owner'];

export interface AreaRule {
  /** How the dashboard and the documentation name the area. */
  title: string;
  read: readonly TeamRole[];
  write: readonly TeamRole[];
  /** Path prefixes of the JSON API (below /api/v1). */
  api: readonly string[];
  /** Path prefixes of the dashboard. */
  web: readonly string[];
}

export const PERMISSIONS = {
  home: { title: 'Home', read: EVERYONE, write: EVERYONE, api: [], web: ['/'] },
  /** One's own password, sessions and sign-out. */
  self: { title: 'Your profile', read: EVERYONE, write: EVERYONE, api: [], web: ['/profile', '/settings/password', '/logout', '/two-factor'] },
  documentation: { title: 'API documentation', read: EVERYONE, write: EVERYONE, api: ['/openapi.json'], web: [] },
  audience: {
    title: 'Audience',
    read: EVERYONE,
    write: EDITORS,
    api: ['/contacts', '/contacts-type', '/segment', '/custom-fields', '/reserve-fields', '/unsubscribes-groups', '/global-unsubscribes', '/suppressions', '/get'],
    web: ['/contacts', '/contact-types', '/segments', '/custom-fields', '/unsubscribe-groups', '/global-unsubscribes', '/suppressions', '/signup-forms'],
  },
  campaigns: {
    title: 'Campaigns, automations and templates',
    read: EVERYONE,
    write: EDITORS,
    api: ['/single-send', '/single/send', '/automations', '/get-design', '/get-dynamic', '/sender', '/senders'],
    web: ['/single-sends', '/automations', '/design-templates', '/my-templates', '/editor', '/senders'],
  },
  /** Receipts, password resets, alerts: editors send and retry, everyone reads the log. */
  transactional: { title: 'Transactional mail', read: EVERYONE, write: EDITORS, api: ['/transactional'], web: ['/transactional'] },
  webhooks: { title: 'Webhooks', read: ADMINS, write: ADMINS, api: ['/webhooks'], web: ['/webhook-endpoints'] },
  team: { title: 'Team', read: ADMINS, write: ADMINS, api: ['/users'], web: ['/team'] },
  apiKeys: { title: 'API keys', read: ADMINS, write: ADMINS, api: ['/api-keys'], web: ['/api-keys'] },
  /** The account's original key pair acts as the owner: only the owner may have a new secret of it. */
  accountKey: { title: "The account's original key pair", read: ADMINS, write: OWNER, api: [], web: ['/api-keys/rotate'] },
  domains: { title: 'Sending domains', read: ADMINS, write: ADMINS, api: ['/domains'], web: ['/domains'] },
  relays: { title: 'Relays', read: ADMINS, write: ADMINS, api: ['/relays'], web: ['/relays'] },
  settings: {
    title: 'Account settings',
    read: ADMINS,
    write: ADMINS,
    api: ['/notification-recipient', '/notification-recipients'],
    web: ['/settings', '/notification-recipients', '/maintenance', '/outbox'],
  },
  /** Who did what: read by the owner and admins; nobody writes it but the service. */
  audit: { title: 'Audit log', read: ADMINS, write: ADMINS, api: ['/audit-log'], web: ['/audit-log'] },
} as const satisfies Record<string, AreaRule>;

export type Area = keyof typeof PERMISSIONS;
export type Ability = 'read' | 'write';
export type Face = 'api' | 'web';
/** What a route does (`reads`, `changes`, `exports`), declared where it is registered when its method does not say it. */
export type Effect = RouteEffect;

/** Routes that only read although they are POSTs (a list with a body, a preview). */
export const READS_BY_POST: Readonly<Record<Face, readonly string[]>> = {
  api: ['/senders'],
  web: ['/editor/preview'],
};

/**
 * GETs that need the right to change the area without changing anything themselves: the
 * dashboard's forms for a new or changed record and its checks before a deletion (a role that
 * may not change the area is not shown the form either). A GET that changes something is not
 * listed here: it says `effect: 'changes'` where it is registered.
 */
export const CHANGES_BY_GET: Readonly<Record<Face, readonly (string | RegExp)[]>> = {
  api: [],
  web: [/\/(new|edit|import|columns|confirm|resend|ab-test)$/, '/maintenance/contacts', '/maintenance/engagement'],
};

/** What a route needs: the area it belongs to, read or write, and the roles allowed. */
export interface Permission {
  area: Area;
  ability: Ability;
  roles: readonly TeamRole[];
}

function covers(prefix: string, path: string): boolean {
  if (prefix === '/') return path === '/';
  return path === prefix || path.startsWith(`${prefix}/`);
}

function listed(list: readonly (string | RegExp)[], path: string): boolean {
  return list.some((entry) => (typeof entry === 'string' ? entry === path : entry.test(path)));
}

/** What a route does: as declared where it is registered, else as its method (and READS_BY_POST) says. */
export function effectOf(face: Face, method: string, path: string, declared?: Effect): Effect {
  if (declared) return declared;
  if (method === 'GET' || method === 'HEAD') return 'reads';
  return listed(READS_BY_POST[face], path) ? 'reads' : 'changes';
}

/**
 * The permission of a route as registered (its path pattern and what it declares it does);
 * throws for a path no area covers. A route that changes needs the right to write its area,
 * as does a form listed in CHANGES_BY_GET; reads and exports need the right to read it.
 */
export function permissionOf(face: Face, method: string, path: string, declared?: Effect): Permission {
  let best: { area: Area; length: number } | undefined;
  for (const [area, rule] of Object.entries(PERMISSIONS) as [Area, AreaRule][]) {
    for (const prefix of rule[face]) {
      if (covers(prefix, path) && (!best || prefix.length > best.length)) best = { area, length: prefix.length };
    }
  }
  if (!best) throw new Error(`${method} ${path} (${face}) belongs to no area of src/http/permissions.ts: add its prefix to one.`);
  const effect = effectOf(face, method, path, declared);
  const form = (method === 'GET' || method === 'HEAD') && listed(CHANGES_BY_GET[face], path);
  const ability: Ability = effect === 'changes' || form ? 'write' : 'read';
  return { area: best.area, ability, roles: PERMISSIONS[best.area][ability] };
}

/** Whether a role may read or change an area (the dashboard hides what it may not). */
export function can(role: TeamRole, area: Area, ability: Ability): boolean {
  return PERMISSIONS[area][ability].includes(role);
}

/** Everything a role may do, as `{ area: { read, write } }`, for templates. */
export function abilitiesOf(role: TeamRole): Record<Area, { read: boolean; write: boolean }> {
  return Object.fromEntries(
    (Object.keys(PERMISSIONS) as Area[]).map((area) => [area, { read: can(role, area, 'read'), write: can(role, area, 'write') }]),
  ) as Record<Area, { read: boolean; write: boolean }>;
}

/** Refuses a request whose actor's role the permission does not list (before anything is read or changed). */
export function checkPermission(role: TeamRole | undefined, permission: Permission): void {
  if (!role || !permission.roles.includes(role)) throw new ForbiddenError();
}
