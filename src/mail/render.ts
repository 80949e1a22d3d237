import { UNSUBSCRIBE_PLACEHOLDER as UNSUBSCRIBE, WEBVIEW_PLACEHOLDER as WEBVIEW } from '../lib/constants';
import { lazy } from '../lib/lazy';
import { LINK_PLACEHOLDER_PREFIX, trackLinks } from './links';
import { LIQUID_LIMITS } from '../lib/constants';
import { hasLiquid, LiquidTemplate, parseLiquid, renderBudget, RenderBudget, renderLiquid, TemplateRenderError } from './liquid';
import { encodeParts, encodePiece } from './quoted-printable';
import { escapeHtml, parseTemplate, Part, Placeholder, renderParts } from './template';

/**
 * A message compiled once per send (or automation step): subject, preheader, HTML and a text
 * part generated from the HTML, each parsed into parts. Rendering one recipient joins them.
 */
export interface CompiledMessage {
  subject: Part[];
  preheader: Part[];
  html: Part[];
  text: Part[];
  /** Destinations of the tracked links: link n is `links[n - 1]` (empty with click tracking off). */
  links: string[];
  /** The parts that use Liquid, rendered per recipient before their placeholders (absent: none does). */
  liquid?: LiquidParts;
}

/** A message's Liquid templates, parsed once; each is present only when its source uses Liquid and parses. */
export interface LiquidParts {
  subject?: LiquidTemplate;
  preheader?: LiquidTemplate;
  /** The HTML with its markers and tracked links (`href="((__link_n))"`), as `html` is. */
  html?: LiquidTemplate;
  /**
   * The text part as a template: the HTML as written made text once per send, its Liquid kept,
   * so a recipient's text costs a render, not an HTML-to-text conversion of their HTML.
   */
  text?: LiquidTemplate;
  /** Only when `text` does not parse (the conversion split a tag): the HTML as written, whose rendering is made text per recipient. */
  source?: LiquidTemplate;
  /** What link n of the template is stored as, when not n (an automation step's links: see renumberLinks). */
  linkNumbers?: number[];
}

/** What the engine adds to a message: the open pixel, click tracking of its links. */
export interface TrackingOptions {
  trackOpens: boolean;
  trackClicks: boolean;
  /** Links that are never tracked (the service's own unsubscribe pages). */
  ownUrlPrefixes?: string[];
}

/** Loaded by the first send (or preview), not at start: a web process may never need it. */
const htmlToText = lazy(() => require('html-to-text') as typeof import('html-to-text'));

/** Filled by the engine, not by the template's author. */
const PREHEADER = '((__preheader))';
const PIXEL = '((__pixel))';

const TEXT_SELECTORS = [
  { selector: 'img', format: 'skip' },
  { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
  // Upper-casing would turn ((first_name)) into an unknown name.
  ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
];

/** The text part of an HTML body (the converter is compiled once: compiling its options costs more than a small conversion). */
const textOf = lazy(() =>
  htmlToText().compile({
    wordwrap: false,
    selectors: [...TEXT_SELECTORS, { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } }],
  }),
);

/**
 * The text of an HTML body whose Liquid runs after: tables are read as blocks, cell after cell,
 * because a table layout drops what stands between its rows, where `{% if %}` and `{% for %}`
 * around a row stand.
 */
const liquidTextOf = lazy(() =>
  htmlToText().compile({
    wordwrap: false,
    selectors: [...TEXT_SELECTORS, ...['table', 'thead', 'tbody', 'tfoot', 'tr', 'td', 'th'].map((selector) => ({ selector, format: 'block' }))],
  }),
);

/** The HTML's parts, each tracked link's placeholder (`href="((__link_n))"`) knowing its number. */
function htmlParts(html: string): Part[] {
  return parseTemplate(html).map((part) =>
    typeof part !== 'string' && part.inTag && part.name.startsWith(LINK_PLACEHOLDER_PREFIX)
      ? { ...part, link: Number(part.name.slice(LINK_PLACEHOLDER_PREFIX.length)) }
      : part,
  );
}

export function compileMessage(
  source: { subject: string; preheader: string; html: string },
  tracking: TrackingOptions,
): CompiledMessage {
  const tracked = tracking.trackClicks ? trackLinks(source.html, tracking.ownUrlPrefixes) : { html: source.html, urls: [] };
  const marked = withMarkers(tracked.html, tracking.trackOpens);
  const compiled: CompiledMessage = {
    subject: parseTemplate(source.subject),
    preheader: parseTemplate(source.preheader),
    html: htmlParts(marked),
    text: [],
    links: tracked.urls,
  };
  if (hasLiquid(source.subject) || hasLiquid(source.preheader) || hasLiquid(source.html)) {
    const html = parseLiquid(marked, true);
    const text = html && parseLiquid(liquidTextOf()(source.html), false);
    const asWritten = html && !text ? parseLiquid(source.html, true) : undefined;
    const liquid: LiquidParts = {
      subject: parseLiquid(source.subject, false),
      preheader: parseLiquid(source.preheader, false),
      ...(html && text ? { html, text } : html && asWritten ? { html, source: asWritten } : {}),
    };
    if (liquid.subject || liquid.preheader || liquid.html) compiled.liquid = liquid;
  }
  // A body with Liquid makes its text per recipient (see LiquidParts.text).
  if (!compiled.liquid?.html) compiled.text = parseTemplate(textOf()(source.html));
  return compiled;
}

/** The message with its tracked link n stored as `numbers[n - 1]` (an automation's links are numbered across its steps). */
export function renumberLinks(compiled: CompiledMessage, numbers: number[]): CompiledMessage {
  return {
    ...compiled,
    html: compiled.html.map((part) => (typeof part !== 'string' && part.link !== undefined ? { ...part, link: numbers[part.link - 1] } : part)),
    ...(compiled.liquid ? { liquid: { ...compiled.liquid, linkNumbers: numbers } } : {}),
  };
}

/** Preheader right after <body>, open pixel (when opens are tracked) right before </body> (or at the ends). */
function withMarkers(html: string, pixel: boolean): string {
  const open = /<body[^>]*>/i.exec(html);
  let out = open ? html.slice(0, open.index + open[0].length) + PREHEADER + html.slice(open.index + open[0].length) : PREHEADER + html;
  if (!pixel) return out;
  const close = out.search(/<\/body\s*>/i);
  out = close >= 0 ? out.slice(0, close) + PIXEL + out.slice(close) : out + PIXEL;
  return out;
}

export interface RenderInput {
  /** Personal values by placeholder name; missing names render empty. */
  values: Record<string, string | undefined>;
  unsubscribeUrl: string;
  pixelUrl: string;
  /** The message's click URL without the link number: `$BASE_URL/c/<token>`. */
  clickUrl: string;
  /** Values only Liquid reads, which may be objects (a transactional message's `data`): `{{ data.order_id }}`. */
  liquidValues?: Record<string, unknown>;
}

export interface RenderedMessage {
  subject: string;
  html: string;
  text: string;
  /** Liquid values that failed for this recipient and rendered empty (absent: none). */
  templateErrors?: number;
}

/**
 * One recipient's message. Its Liquid shares `budget` (one message's by default); a part whose
 * Liquid does not render throws a TemplateRenderError: such a message is never sent.
 */
export function renderMessage(compiled: CompiledMessage, input: RenderInput, budget: RenderBudget = renderBudget()): RenderedMessage {
  const value = placeholderValues(compiled, input, budget);
  const body = value.liquid?.body();
  if (body) {
    const rendered = { subject: value.subject, html: renderParts(body.html, value.html), text: renderParts(body.text, value.plain) };
    return withErrors(rendered, value.liquid?.tally.count);
  }
  return withErrors({ subject: value.subject, html: renderParts(compiled.html, value.html), text: renderParts(compiled.text, value.plain) }, value.liquid?.tally.count);
}

/**
 * The same message with its HTML and text parts already quoted-printable encoded, for the
 * transport to send as is: the template's literal parts are encoded once per send, so one
 * message costs the encoding of its personal values only.
 */
export function renderEncoded(compiled: CompiledMessage, input: RenderInput, budget: RenderBudget = renderBudget()): RenderedMessage {
  const value = placeholderValues(compiled, input, budget);
  const body = value.liquid?.body();
  if (body) {
    // Parts made for one recipient are encoded whole: there is nothing to reuse.
    const rendered = { subject: value.subject, html: encodePiece(renderParts(body.html, value.html)), text: encodePiece(renderParts(body.text, value.plain)) };
    return withErrors(rendered, value.liquid?.tally.count);
  }
  return withErrors({ subject: value.subject, html: encodeParts(compiled.html, value.html), text: encodeParts(compiled.text, value.plain) }, value.liquid?.tally.count);
}

function withErrors(rendered: RenderedMessage, errors: number | undefined): RenderedMessage {
  if (errors) rendered.templateErrors = errors;
  return rendered;
}

/**
 * One recipient's Liquid: the variables are the placeholders' names (an empty value is
 * missing, so `{% if first_name %}` is false for it) and `unsubscribe_preferences` is the
 * preference page's URL. A part's Liquid renders first; its output's `((name))` placeholders
 * are then filled as in any other message.
 */
function liquidOf(liquid: LiquidParts, input: RenderInput, budget: RenderBudget) {
  const variables: Record<string, unknown> = { ...input.liquidValues };
  for (const [name, value] of Object.entries(input.values)) if (value) variables[name] = value;
  variables[UNSUBSCRIBE] = input.unsubscribeUrl;
  const tally = { count: 0 };
  const numbers = liquid.linkNumbers;
  return {
    tally,
    /** The part's placeholders after its Liquid ran; `fallback` when the part has no Liquid. */
    parts: (template: LiquidTemplate | undefined, fallback: Part[], part: 'subject' | 'preheader'): Part[] =>
      template ? parseTemplate(renderLiquid(template, variables, tally, budget, part)) : fallback,
    /** The HTML and text parts of the body, or undefined when the body has no Liquid. */
    body: (): { html: Part[]; text: Part[] } | undefined => {
      if (!liquid.html) return undefined;
      const html = htmlParts(renderLiquid(liquid.html, variables, tally, budget, 'body'));
      return {
        html: numbers ? html.map((part) => (typeof part !== 'string' && part.link !== undefined ? { ...part, link: numbers[part.link - 1] } : part)) : html,
        text: parseTemplate(liquid.text ? renderLiquid(liquid.text, variables, tally, budget, 'body') : textOfRendered(renderLiquid(liquid.source!, variables, tally, budget, 'body'))),
      };
    },
  };
}

/**
 * A rendered body made text for one recipient (the rare body whose text could not be made once
 * per send): only a small one, since the conversion costs far more per character than a render.
 */
function textOfRendered(html: string): string {
  if (html.length > LIQUID_LIMITS.textOfHtmlChars) {
    throw new TemplateRenderError('body', `its text part is made per recipient and its HTML is longer than the ${LIQUID_LIMITS.textOfHtmlChars} characters that allows`);
  }
  return textOf()(html);
}

/** What each placeholder of one recipient's message stands for, in text and in HTML. */
function placeholderValues(compiled: CompiledMessage, input: RenderInput, budget: RenderBudget) {
  const plain = (p: Placeholder) => (p.name === UNSUBSCRIBE ? input.unsubscribeUrl : (input.values[p.name] ?? ''));
  const liquid = compiled.liquid && liquidOf(compiled.liquid, input, budget);
  const subject = oneLine(renderParts(liquid ? liquid.parts(compiled.liquid!.subject, compiled.subject, 'subject') : compiled.subject, plain));
  const preheader = oneLine(renderParts(liquid ? liquid.parts(compiled.liquid!.preheader, compiled.preheader, 'preheader') : compiled.preheader, plain));
  let clickUrl: string | undefined;
  const html = (p: Placeholder): string => {
    if (p.name === '__preheader') return preheaderHtml(preheader);
    if (p.link !== undefined) return `${(clickUrl ??= escapeHtml(input.clickUrl))}/${p.link}`;
    if (p.name === '__pixel') return pixelHtml(input.pixelUrl);
    // Without a URL (a message in the public archive, which names nobody) the link is left out.
    if (p.name === UNSUBSCRIBE && !p.inTag) {
      return input.unsubscribeUrl ? `<a href="${escapeHtml(input.unsubscribeUrl)}">Unsubscribe or change your email preferences</a>` : '';
    }
    if (p.name === WEBVIEW && !p.inTag) {
      const url = input.values[WEBVIEW];
      return url ? `<a href="${escapeHtml(url)}">View this email in your browser</a>` : '';
    }
    return escapeHtml(plain(p));
  };
  return { subject, plain, html, liquid };
}

function oneLine(value: string): string {
  return value.replace(/[\r\n]+/g, ' ').trim();
}

function preheaderHtml(preheader: string): string {
  if (!preheader) return '';
  return `<div style="display:none;font-size:1px;line-height:1px;max-height:0;max-width:0;opacity:0;overflow:hidden;mso-hide:all">${escapeHtml(preheader)}</div>`;
}

function pixelHtml(url: string): string {
  return `<img src="${escapeHtml(url)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0">`;
}
