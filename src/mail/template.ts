/**
 * `((name))` placeholders, parsed once per send into literal and placeholder parts so that
 * rendering a message is a join, not a parse.
 */
export interface Placeholder {
  name: string;
  /** The placeholder sits inside an HTML tag (an attribute such as href), not in text. */
  inTag: boolean;
  /** A tracked link's number (from 1): the placeholder stands for its click URL. */
  link?: number;
}

export type Part = string | Placeholder;

const PLACEHOLDER = /\(\(\s*([A-Za-z0-9_]+)\s*\)\)/g;

export function parseTemplate(source: string): Part[] {
  const parts: Part[] = [];
  let last = 0;
  for (const match of source.matchAll(PLACEHOLDER)) {
    const before = source.slice(0, match.index);
    if (match.index > last) parts.push(source.slice(last, match.index));
    parts.push({ name: match[1], inTag: before.lastIndexOf('<') > before.lastIndexOf('>') });
    last = match.index + match[0].length;
  }
  if (last < source.length) parts.push(source.slice(last));
  return parts;
}

/**
 * The source with the placeholders `values` has a value for replaced by it, HTML-escaped; the
 * others stay as written (a design shown before any contact is known).
 */
export function fillPlaceholders(source: string, values: Readonly<Record<string, string>>): string {
  return source.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(values, name) ? escapeHtml(values[name]) : whole));
}

/** Joins the parts, asking `value` for each placeholder. */
export function renderParts(parts: Part[], value: (placeholder: Placeholder) => string): string {
  let out = '';
  for (const part of parts) out += typeof part === 'string' ? part : value(part);
  return out;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}
