import type { Request, Response } from 'express';
import nunjucks from 'nunjucks';
import { createViews } from '../lib/views';
import type { Cookies } from './cookies';
import { assetUrls } from './assets';
import { Ability, Area, can, PERMISSIONS } from '../http/permissions';
import type { TeamRole } from '../lib/constants';

/**
 * The one nunjucks environment of the dashboard: autoescape on (user data is never marked
 * safe), templates cached after their first compile.
 */
export function createViewEnvironment(): nunjucks.Environment {
  const env = createViews({ trimBlocks: true, lstripBlocks: true });
  env.addFilter('number', (value: unknown) => (value === null || value === undefined ? '' : Number(value).toLocaleString('en-US')));
  env.addFilter('datetime', formatDateTime);
  env.addGlobal('assets', assetUrls);
  env.addGlobal('can', mayUse);
  return env;
}

/**
 * `can('audience', 'write')` in a template: whether the signed-in person's role may read or
 * change that area of src/http/permissions.ts (the declaration the routes check), so a page
 * renders only the links and buttons its reader may use. It reads the role from the page's
 * context: a macro that asks must be imported `with context`, and asking without a signed-in
 * person (a public page, or a macro imported without context) is a mistake in the template.
 */
function mayUse(this: { ctx: Record<string, unknown> }, area: string, ability: Ability = 'read'): boolean {
  if (!Object.hasOwn(PERMISSIONS, area)) throw new Error(`can('${area}'): no such area in src/http/permissions.ts`);
  if (ability !== 'read' && ability !== 'write') throw new Error(`can('${area}', '${String(ability)}'): the ability is 'read' or 'write'`);
  const role = (this.ctx.member as { role?: TeamRole } | undefined)?.role;
  if (!role) throw new Error(`can('${area}') has no signed-in person in its context: import the macros that ask "with context"`);
  return can(role, area as Area, ability);
}

/**
 * `2026-11-22 09:15` in the account's time zone; empty for no value. Takes ISO timestamps and
 * the reference's plain `YYYY-MM-DD HH:MM:SS` (UTC) of sent_at, live_at and send_at.
 */
export function formatDateTime(value: unknown, timeZone = 'UTC'): string {
  if (value === null || value === undefined || value === '') return '';
  const text = String(value);
  const date = new Date(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(text) ? `${text.replace(' ', 'T')}Z` : text);
  if (Number.isNaN(date.getTime())) return '';
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(date);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}`;
}

const FLASH_COOKIE = 'cc_flash';

/** How much of a page a request wants (htmx 4 sends HX-Request-Type on every request). */
export type RequestShape = 'document' | 'body' | 'fragment';

export function shapeOf(req: Request): RequestShape {
  if (req.get('HX-Request') !== 'true') return 'document';
  // History restores and boosted navigation target <body>: they get the page without <head>.
  if (req.get('HX-History-Restore-Request') === 'true' || req.get('HX-Request-Type') !== 'partial') return 'body';
  return 'fragment';
}

/** The id of the element an htmx request swaps into (`HX-Target: div#contact-list`). */
export function targetIdOf(req: Request): string | undefined {
  const target = req.get('HX-Target');
  const hash = target?.indexOf('#') ?? -1;
  return target && hash >= 0 ? decodeURIComponent(target.slice(hash + 1)) : undefined;
}

/** `file.njk#macro`: a macro that renders one swap target, called with the page's data. */
export type FragmentRef = `${string}.njk#${string}`;

export interface PageOptions {
  status?: number;
  /** Swap targets this page can answer alone: element id → macro. */
  fragments?: Record<string, FragmentRef>;
}

export class Views {
  private readonly fragmentTemplates = new Map<string, nunjucks.Template>();

  constructor(
    readonly env: nunjucks.Environment,
    private readonly cookies: Cookies,
  ) {}

  /**
   * A whole document on a normal request, the body on a boosted or history request, or one
   * swap target on a partial htmx request whose target the page declares.
   */
  page(req: Request, res: Response, template: string, data: Record<string, unknown>, options: PageOptions = {}): void {
    const shape = shapeOf(req);
    prepare(res, options.status);
    // A refused boosted form must not put its POST address into the history (a reload would 404).
    if (shape !== 'document' && res.statusCode >= 400) res.set('HX-Push-Url', 'false');
    const targetId = shape === 'fragment' ? targetIdOf(req) : undefined;
    const fragment = targetId ? options.fragments?.[targetId] : undefined;
    const context = { ...res.locals, ...data };
    if (fragment) {
      const flash = res.locals.flashNow as string | undefined;
      // The message of an in-page change goes to #flash beside the swapped fragment.
      const partial = flash
        ? `<hx-partial hx-target="#flash" hx-swap="innerHTML">${this.renderFragment('partials/flash.njk#flash', { message: flash })}</hx-partial>`
        : '';
      res.send(this.renderFragment(fragment, context) + partial);
      return;
    }
    const flash = this.cookies.read(req, FLASH_COOKIE);
    if (flash) this.cookies.clear(res, FLASH_COOKIE);
    res.send(this.env.render(template, { ...context, flash, shape, path: req.path }));
  }

  /** Only one swap target (a row, a counter, a progress bar), whatever the request. */
  fragment(res: Response, ref: FragmentRef, data: Record<string, unknown>, status?: number): void {
    prepare(res, status);
    res.send(this.renderFragment(ref, { ...res.locals, ...data }));
  }

  /**
   * After a change: an htmx swap gets the fresh fragment (from `refresh`) with the message;
   * a plain form post is redirected to `location`, which shows the message once.
   */
  async changed(req: Request, res: Response, location: string, flash: string, refresh: () => unknown): Promise<void> {
    if (shapeOf(req) !== 'fragment') return this.redirect(res, location, flash);
    res.locals.flashNow = flash;
    await refresh();
  }

  /** Post/Redirect/Get with a one-time message shown by the next page. */
  redirect(res: Response, location: string, flash?: string): void {
    if (flash) this.cookies.set(res, FLASH_COOKIE, flash, { maxAgeMs: 60_000 });
    res.redirect(303, location);
  }

  private renderFragment(ref: FragmentRef, context: Record<string, unknown>): string {
    let template = this.fragmentTemplates.get(ref);
    if (!template) {
      const [file, macro] = ref.split('#');
      // The names come from code, never from a request.
      // With context, so the macro's can() finds the signed-in person.
      template = new nunjucks.Template(`{% from "${file}" import ${macro} with context %}{{ ${macro}(v) }}`, this.env);
      this.fragmentTemplates.set(ref, template);
    }
    return template.render({ ...context, v: context });
  }
}

function prepare(res: Response, status = 200): void {
  res.status(status);
  res.type('html');
  // The same URL answers a document, a body or a fragment; private pages are never cached.
  res.vary('HX-Request');
  res.vary('HX-Request-Type');
  res.set('Cache-Control', 'no-store');
}

