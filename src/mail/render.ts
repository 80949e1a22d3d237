import { UNSUBSCRIBE_PLACEHOLDER as UNSUBSCRIBE, WEBVIEW_PLACEHOLDER as WEBVIEW } from '../lib/constants';
import { lazy } from '../lib/lazy';
import { LINK_PLACEHOLDER_PREFIX, trackLinks } from './links';
import { encodeParts } from './quoted-printable';
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

export function compileMessage(
  source: { subject: string; preheader: string; html: string },
  tracking: TrackingOptions,
): CompiledMessage {
  const text = htmlToText().convert(source.html, {
    wordwrap: false,
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      // Upper-casing would turn ((first_name)) into an unknown name.
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  });
  const tracked = tracking.trackClicks ? trackLinks(source.html, tracking.ownUrlPrefixes) : { html: source.html, urls: [] };
  const html = parseTemplate(withMarkers(tracked.html, tracking.trackOpens)).map((part) =>
    typeof part !== 'string' && part.inTag && part.name.startsWith(LINK_PLACEHOLDER_PREFIX)
      ? { ...part, link: Number(part.name.slice(LINK_PLACEHOLDER_PREFIX.length)) }
      : part,
  );
  return {
    subject: parseTemplate(source.subject),
    preheader: parseTemplate(source.preheader),
    html,
    text: parseTemplate(text),
    links: tracked.urls,
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
}

export interface RenderedMessage {
  subject: string;
  html: string;
  text: string;
}

export function renderMessage(compiled: CompiledMessage, input: RenderInput): RenderedMessage {
  const value = placeholderValues(compiled, input);
  return { subject: value.subject, html: renderParts(compiled.html, value.html), text: renderParts(compiled.text, value.plain) };
}

/**
 * The same message with its HTML and text parts already quoted-printable encoded, for the
 * transport to send as is: the template's literal parts are encoded once per send, so one
 * message costs the encoding of its personal values only.
 */
export function renderEncoded(compiled: CompiledMessage, input: RenderInput): RenderedMessage {
  const value = placeholderValues(compiled, input);
  return { subject: value.subject, html: encodeParts(compiled.html, value.html), text: encodeParts(compiled.text, value.plain) };
}

/** What each placeholder of one recipient's message stands for, in text and in HTML. */
function placeholderValues(compiled: CompiledMessage, input: RenderInput) {
  const plain = (p: Placeholder) => (p.name === UNSUBSCRIBE ? input.unsubscribeUrl : (input.values[p.name] ?? ''));
  const subject = oneLine(renderParts(compiled.subject, plain));
  const preheader = oneLine(renderParts(compiled.preheader, plain));
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
  return { subject, plain, html };
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
