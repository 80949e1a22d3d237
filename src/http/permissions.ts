import { TEAM_ROLES, TeamRole } from '../lib/constants';
import { ForbiddenError } from '../lib/errors';

/**
 * Who may do what: the one declaration the API's route table, the dashboard's route table and
 * pages, and the OpenAPI document all read (docs/team-and-roles.md prints it).
 *
 * The service is cut into areas. Each area names the roles that may read it and the roles
 * that may change it, and the path prefixes it covers on each face (the longest matching
 * prefix wins, at a `/` boundary). A GET reads and any other method changes, except for the
 * routes listed in READS_BY_POST and CHANGES_BY_GET. Both route tables look every route up
 * when it is registered, so a route no area covers stops the start with its path.
 */

const EVERYONE: readonly TeamRole[] = TEAM_ROLES;
const EDITORS: readonly TeamRole[] = ['owner', 'admin', 'editor'];
const ADMINS: readonly TeamRole[] = ['owner', 'admin'];

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
  webhooks: { title: 'Webhooks', read: ADMINS, write: ADMINS, api: ['/webhooks'], web: ['/webhook-endpoints'] },
  team: { title: 'Team', read: ADMINS, write: ADMINS, api: ['/users'], web: ['/team'] },
  apiKeys: { title: 'API keys', read: ADMINS, write: ADMINS, api: ['/api-keys'], web: ['/api-keys'] },
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

/** Routes that only read although they are POSTs (a list with a body, a preview). */
export const READS_BY_POST: Readonly<Record<Face, readonly string[]>> = {
  api: ['/senders'],
  web: ['/editor/preview'],
};

/**
 * Routes that change something although they are GETs (the reference's names), and the
 * dashboard's forms for a new or changed record: a role that may not change the area is not
 * shown the form either.
 */
export const CHANGES_BY_GET: Readonly<Record<Face, readonly (string | RegExp)[]>> = {
  api: ['/automations/duplicate', '/automations/pause', '/automations/set-live', '/sender/resend-mail', '/single/send/duplicate', '/single/send/retry-failed', '/single/send/ab/choose'],
  web: [/\/(new|edit|import|columns|confirm|resend|ab-test)$/, '/maintenance/contacts', '/maintenance/engagement', '/api-keys/rotate'],
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

/** The permission of a route as registered (its path pattern); throws for a path no area covers. */
export function permissionOf(face: Face, method: string, path: string): Permission {
  let best: { area: Area; length: number } | undefined;
  for (const [area, rule] of Object.entries(PERMISSIONS) as [Area, AreaRule][]) {
    for (const prefix of rule[face]) {
      if (covers(prefix, path) && (!best || prefix.length > best.length)) best = { area, length: prefix.length };
    }
  }
  if (!best) throw new Error(`${method} ${path} (${face}) belongs to no area of src/http/permissions.ts: add its prefix to one.`);
  const reads = method === 'GET' || method === 'HEAD' ? !listed(CHANGES_BY_GET[face], path) : listed(READS_BY_POST[face], path);
  const ability: Ability = reads ? 'read' : 'write';
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
