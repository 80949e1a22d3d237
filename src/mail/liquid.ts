import type { Liquid, Template } from 'liquidjs';
import { LIQUID_LIMITS } from '../lib/constants';
import { lazy } from '../lib/lazy';

/**
 * Liquid logic in subjects and bodies (`{% if %}`, `{{ name | default: "friend" }}`), through
 * liquidjs in a sandbox: no file system (no include, render or layout tags at all, and an empty
 * in-memory template map besides), no properties but a value's own (no `constructor`, no
 * prototype), unknown filters refused when saved (`raw` among them), and the work of each parse
 * and render bounded by LIQUID_LIMITS. A source without `{{` or `{%` is never handed to the engine.
 */

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
        } catch (err) {
          // Running out of time or text ends the whole render, not just this value.
          if (err instanceof Error && / limit exceeded/.test(err.message)) throw err;
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

/** Tags and outputs of a source, counted without parsing it. */
function tagCount(source: string): number {
  return source.match(/\{[{%]/g)?.length ?? 0;
}

const TOO_MANY_TAGS = `it has more than ${LIQUID_LIMITS.tags} Liquid tags and outputs`;

/** Why a source does not parse, with its line (`line 3: tag "iff" not found`); undefined when it parses or has no Liquid. */
export function liquidSyntaxError(source: string): string | undefined {
  if (!hasLiquid(source)) return undefined;
  if (tagCount(source) > LIQUID_LIMITS.tags) return TOO_MANY_TAGS;
  try {
    engines.text().parse(source);
    return undefined;
  } catch (err) {
    return withLine(err, (reason) => (reason.startsWith('parse length limit exceeded') ? `it is longer than the ${LIQUID_LIMITS.parseChars} characters a template with Liquid may have` : reason));
  }
}

/** A liquidjs error in words, its line first (liquidjs appends ", line:3, col:1" to its messages). */
function withLine(err: unknown, words: (reason: string) => string = (reason) => reason): string {
  const message = err instanceof Error ? err.message : String(err);
  const token = (err as { token?: { getPosition?: () => [number, number] } }).token;
  const line = token?.getPosition?.()[0] ?? Number(/, line:(\d+), col:\d+$/.exec(message)?.[1] ?? 0);
  const reason = words(message.replace(/, line:\d+, col:\d+$/, ''));
  return line ? `line ${line}: ${reason}` : reason;
}

/** The parsed template, or undefined when the source has no Liquid or does not parse (then it is sent as written). */
export function parseLiquid(source: string, html: boolean): LiquidTemplate | undefined {
  if (!hasLiquid(source) || tagCount(source) > LIQUID_LIMITS.tags) return undefined;
  try {
    return { templates: (html ? engines.html() : engines.text()).parse(source), html };
  } catch {
    return undefined;
  }
}

/**
 * The time the Liquid of one message (the worker's) or of one request (a preview, a test send)
 * may take together: each render gets what is left.
 */
export interface RenderBudget {
  ms: number;
  deadline: number;
  /** The process's CPU time when it began (see busy in TemplateRenderError). */
  cpu: NodeJS.CpuUsage;
}

export function renderBudget(ms: number = LIQUID_LIMITS.messageRenderMs): RenderBudget {
  return { ms, deadline: performance.now() + ms, cpu: process.cpuUsage() };
}

/**
 * The budget is wall-clock time: when the process got less than half of it as CPU, the machine
 * was busy (or paused to collect garbage), and the same message may well render another time.
 */
function timeUp(part: MessagePart, budget: RenderBudget, err: unknown): TemplateRenderError {
  const cpu = process.cpuUsage(budget.cpu);
  if ((cpu.user + cpu.system) / 1000 < budget.ms / 2) return new TemplateRenderError(part, 'the server was too busy to render it in time', true);
  return new TemplateRenderError(part, withLine(err, limitWords(budget)), false, true);
}

/** Which part of a message a template is, in the words of a template error. */
export type MessagePart = 'subject' | 'preheader' | 'body';

/**
 * A subject or body whose Liquid could not be rendered for a recipient (past its time or the
 * text it may build): the message is not sent (reason `template_error`), a preview says why.
 */
export class TemplateRenderError extends Error {
  constructor(
    readonly part: MessagePart,
    readonly reason: string,
    /** The time ran out while the process got little CPU (a busy machine): the template is not to blame, a later try may render it. */
    readonly busy = false,
    /** The time ran out (busy or not), as opposed to the text the render may build. */
    readonly timedOut = busy,
  ) {
    super(`The ${part} could not be rendered: ${reason}.`);
    this.name = 'TemplateRenderError';
  }
}

/** What ran out, in the reader's words. */
function limitWords(budget: RenderBudget): (reason: string) => string {
  return (reason) => {
    if (reason.startsWith('template render limit exceeded')) return `its Liquid took longer than the ${budget.ms} ms a message may take`;
    if (reason.startsWith('memory alloc limit exceeded')) return `its Liquid built more than the ${LIQUID_LIMITS.memory} characters a render may build (a range or a filter too large)`;
    return reason;
  };
}

/**
 * One recipient's text of a template. A filter that fails renders empty and adds one to
 * `tally`; a render that fails as a whole (past what is left of `budget`, past the text it
 * may build, or longer than LIQUID_LIMITS.outputChars) throws a TemplateRenderError.
 */
export function renderLiquid(template: LiquidTemplate, variables: Record<string, unknown>, tally: Tally, budget: RenderBudget, part: MessagePart): string {
  const scope: Record<string | symbol, unknown> = { ...variables, [FAILURES]: tally };
  const left = budget.deadline - performance.now();
  if (left <= 0) throw timeUp(part, budget, new Error('template render limit exceeded'));
  let out: string;
  try {
    out = String((template.html ? engines.html() : engines.text()).renderSync(template.templates, scope, { renderLimit: left }));
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('template render limit exceeded')) throw timeUp(part, budget, err);
    throw new TemplateRenderError(part, withLine(err, limitWords(budget)));
  }
  if (out.length > LIQUID_LIMITS.outputChars) throw new TemplateRenderError(part, `its Liquid made more than the ${LIQUID_LIMITS.outputChars} characters a part may have`);
  return out;
}
