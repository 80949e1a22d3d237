import { permissionOf } from '../http/permissions';
import type { TeamRole } from '../lib/constants';

/** Roles that may use every page: nothing to hide for them, and no page costs them a scan. */
const UNLIMITED: readonly TeamRole[] = ['owner', 'admin'];

const FORM = /<form\b([^>]*)>[\s\S]*?<\/form>/g;
const LINK = /<a\b([^>]*)>([\s\S]*?)<\/a>/g;
const HX_ELEMENT = /<(button|input)\b([^>]*\bhx-(?:post|get)="[^"]*"[^>]*)>(?:[\s\S]*?<\/\1>)?/g;

function attribute(attributes: string, name: string): string | undefined {
  return new RegExp(`\\b${name}="([^"]*)"`).exec(attributes)?.[1];
}

/** Whether the role may use this address of the dashboard; addresses no area covers (assets, docs) are left alone. */
function allowed(role: TeamRole, method: 'GET' | 'POST', href: string): boolean {
  if (!href.startsWith('/') || href.startsWith('//')) return true;
  const path = href.replace(/[?#].*$/, '').replace(/&amp;.*$/, '') || '/';
  try {
    return permissionOf('web', method, path).roles.includes(role);
  } catch {
    return true;
  }
}

/**
 * Takes out of a rendered page every form, link and htmx control that leads where the role may
 * not go (a link inside a sentence becomes its plain words), read from the same declaration the routes check (src/http/permissions.ts): pages are
 * written once for everyone, and an analyst simply does not see "New contact" or "Delete".
 */
export function hideRefused(html: string, role: TeamRole | undefined): string {
  if (!role || UNLIMITED.includes(role)) return html;
  return html
    .replace(FORM, (form, attributes: string) => {
      const method = (attribute(attributes, 'method') ?? 'get').toUpperCase() === 'POST' || attribute(attributes, 'hx-post') ? 'POST' : 'GET';
      const action = attribute(attributes, 'hx-post') ?? attribute(attributes, 'action') ?? '';
      return allowed(role, method, action) ? form : '';
    })
    // A link in a sentence keeps its words; a link that is a whole control goes (menus, "New …" buttons).
    .replace(LINK, (link, attributes: string, inner: string) => {
      if (allowed(role, 'GET', attribute(attributes, 'href') ?? '')) return link;
      return /\bclass="[^"]*\bbutton\b/.test(attributes) || /^\s*<li\b/.test(inner) ? '' : inner;
    })
    .replace(HX_ELEMENT, (element, _tag: string, attributes: string) => {
      const post = attribute(attributes, 'hx-post');
      return allowed(role, post ? 'POST' : 'GET', post ?? attribute(attributes, 'hx-get') ?? '') ? element : '';
    });
}
