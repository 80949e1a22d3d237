import { Parser } from 'htmlparser2';
import { hasLiquid } from './liquid';

/** The placeholder that stands for tracked link n (from 1) in a compiled message. */
export const LINK_PLACEHOLDER_PREFIX = '__link_';

export interface TrackedLinks {
  /** The HTML with each tracked href replaced by `href="((__link_<n>))"`. */
  html: string;
  /** The destination of link n at index n - 1; one entry per distinct URL. */
  urls: string[];
}

/**
 * Finds the links to track in a message's HTML with a real HTML parser (htmlparser2, which
 * html-to-text already uses): every `<a>`/`<area>` whose href is http(s), except links marked
 * `data-no-track`, links built from placeholders or Liquid (the preference link and personal URLs,
 * which differ per recipient) and the service's own unsubscribe links. Each href is replaced in the
 * source text, so the rest of the HTML stays byte for byte as written. The same URL twice is one link.
 */
export function trackLinks(html: string, ownUrlPrefixes: string[] = []): TrackedLinks {
  const edits: Array<{ start: number; end: number; n: number }> = [];
  const urls: string[] = [];
  const numberOf = new Map<string, number>();
  let href: { start: number; end: number; value: string } | undefined;

  const parser = new Parser(
    {
      onattribute(name, value, quote) {
        // The parser's indexes span the attribute from its name to its closing quote (inclusive),
        // or to just after an unquoted value.
        if (name === 'href') href = { start: parser.startIndex, end: quote ? parser.endIndex + 1 : parser.endIndex, value };
      },
      onopentag(name, attributes) {
        const found = href;
        href = undefined;
        if (!found || (name !== 'a' && name !== 'area') || 'data-no-track' in attributes) return;
        const url = found.value.trim();
        if (!/^https?:\/\/[^\s]/i.test(url) || url.includes('((') || hasLiquid(url) || ownUrlPrefixes.some((p) => url.startsWith(p))) return;
        let n = numberOf.get(url);
        if (n === undefined) {
          urls.push(url);
          n = urls.length;
          numberOf.set(url, n);
        }
        edits.push({ start: found.start, end: found.end, n });
      },
    },
    { decodeEntities: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);

  if (!edits.length) return { html, urls };
  let out = '';
  let at = 0;
  for (const edit of edits) {
    out += html.slice(at, edit.start) + `href="((${LINK_PLACEHOLDER_PREFIX}${edit.n}))"`;
    at = edit.end;
  }
  return { html: out + html.slice(at), urls };
}
