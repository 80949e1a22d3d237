import type { Liquid, Template } from 'liquidjs';
import { lazy } from '../lib/lazy';

/**
 * Liquid logic in subjects and bodies (`{% if %}`, `{{ name | default: "friend" }}`), through
 * liquidjs in a sandbox: no file system (no include, render or layout tags at all, and an empty
 * in-memory template map besides), no properties but a value's own (no `constructor`, no
 * prototype), unknown filters refused when saved (`raw` among them), and each render bounded
 * in time and in the text it may build. A source without `{{` or `{%` is never handed to the engine.
 */

/** Bounds of one template: its length, one render's time and the text a render may allocate. */
export const LIQUID_LIMITS = { parseChars: 2_000_000, renderMs: 50, memory: 20_000_000 } as const;

const FILE_TAGS = ['include', 'render', 'layout'];

/** The per-render tally a wrapped filter reports to, kept in the render's own scope. */
const FAILURES = Symbol('liquid failures');

interface Tally {
  count: number;
}

/** A template parsed once (per send), rendered per recipient. */
export interface LiquidTemplate {
  templates: Template[];
  /** Outputs are HTML-escaped (a message's HTML), or left as they are (a subject, a text). */
  html: boolean;
}

function engine(html: boolean): Liquid {
  const { Liquid: Engine } = require('liquidjs') as typeof import('liquidjs');
  const liquid = new Engine({
    templates: {},
    strictFilters: true,
    ownPropertyOnly: true,
    outputEscape: html ? (value: unknown) => escapeOutput(value) : undefined,
    parseLimit: LIQUID_LIMITS.parseChars,
    renderLimit: LIQUID_LIMITS.renderMs,
    memoryLimit: LIQUID_LIMITS.memory,
    cache: false,
    // `date` reads and writes UTC, whatever the server's own zone.
    timezoneOffset: 0,
  });
  for (const tag of FILE_TAGS) delete liquid.tags[tag];
  // A contact's value in the HTML is always escaped: there is no opting out with `raw`.
  liquid.unregisterFilter('raw');
  // A filter that throws on a recipient's value renders empty and is counted, instead of
  // failing the whole message.
  for (const [name, filter] of Object.entries(liquid.filters)) {
    const options = typeof filter === 'function' ? { handler: filter, raw: false } : filter;
    const { handler } = options;
    liquid.registerFilter(name, {
      raw: options.raw,
      handler(this: ThisParameterType<typeof handler>, ...args: unknown[]) {
        try {
          return handler.apply(this, args as Parameters<typeof handler>);
        } catch {
          const tally = (this.context.environments as Record<symbol, Tally | undefined>)[FAILURES];
          if (tally) tally.count++;
          return '';
        }
      },
    });
  }
  return liquid;
}

const engines = { html: lazy(() => engine(true)), text: lazy(() => engine(false)) };

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '(': '&#40;' };

/** HTML-escaped like a placeholder's value; `(` too, so that a value can never spell a `((name))` placeholder. */
function escapeOutput(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'(]/g, (c) => ESCAPES[c]);
}

/** Whether a source uses Liquid at all: only such sources pay for it. */
export function hasLiquid(source: string): boolean {
  return source.includes('{{') || source.includes('{%');
}

/** Why a source does not parse, with its line (`line 3: tag "iff" not found`); undefined when it parses or has no Liquid. */
export function liquidSyntaxError(source: string): string | undefined {
  if (!hasLiquid(source)) return undefined;
  try {
    engines.text().parse(source);
    return undefined;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const token = (err as { token?: { getPosition?: () => [number, number] } }).token;
    const line = token?.getPosition?.()[0];
    // liquidjs appends ", line:3, col:1" to its messages; the line is said first instead.
    const reason = message.replace(/, line:\d+, col:\d+$/, '');
    return line ? `line ${line}: ${reason}` : reason;
  }
}

/** The parsed template, or undefined when the source has no Liquid or does not parse (then it is sent as written). */
export function parseLiquid(source: string, html: boolean): LiquidTemplate | undefined {
  if (!hasLiquid(source)) return undefined;
  try {
    return { templates: (html ? engines.html() : engines.text()).parse(source), html };
  } catch {
    return undefined;
  }
}

/**
 * One recipient's text of a template. A filter that fails renders empty; a render that fails
 * as a whole (past its time or memory bound) renders empty. Each failure adds one to `tally`.
 */
export function renderLiquid(template: LiquidTemplate, variables: Record<string, unknown>, tally: Tally): string {
  const scope: Record<string | symbol, unknown> = { ...variables, [FAILURES]: tally };
  try {
    return String((template.html ? engines.html() : engines.text()).renderSync(template.templates, scope));
  } catch {
    tally.count++;
    return '';
  }
}
