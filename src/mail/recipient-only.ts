import { DomUtils, parseDocument } from 'htmlparser2';
import type { AnyNode, Element } from 'domhandler';
import { UNSUBSCRIBE_PLACEHOLDER } from '../lib/constants';

/** The attribute that marks a block as meant for a recipient only (a footer's "you receive this because…"). */
export const RECIPIENT_ONLY_ATTRIBUTE = 'data-recipient-only';

/** The preference link as a placeholder or as a Liquid variable, alone in an href or a text. */
const PREFERENCE_LINK = new RegExp(`^\\s*(\\(\\(\\s*${UNSUBSCRIBE_PLACEHOLDER}\\s*\\)\\)|\\{\\{\\s*${UNSUBSCRIBE_PLACEHOLDER}\\s*\\}\\})\\s*$`);
/** What is left of a block that held only the preference link: spaces and separators. */
const NOTHING_LEFT = /^[\s|·•,.:;\-–—]*$/;
/** Blocks that may go with the link they held; a table cell stays (the table's shape would break). */
const REMOVABLE_BLOCKS = new Set(['p', 'div', 'li', 'span', 'small', 'font', 'center', 'strong', 'em', 'b', 'i']);

/**
 * A message's HTML for nobody in particular (the public archive): the blocks that only make
 * sense for the person it was sent to are left out, so a reader sees no empty link and no
 * blank where an address stood. Left out are elements marked `data-recipient-only`, links to
 * the preference page (`href="((unsubscribe_preferences))"`, or its Liquid form) and the
 * bare placeholder; a paragraph (or similar block) that held nothing else goes with them.
 * The rest of the HTML stays byte for byte as written: the parser only finds where to cut.
 */
export function withoutRecipientBlocks(html: string): string {
  const doc = parseDocument(html, { withStartIndices: true, withEndIndices: true, decodeEntities: false, lowerCaseAttributeNames: true });
  const cuts: Array<{ start: number; end: number }> = [];
  const cut = (node: AnyNode) => {
    if (node.startIndex === null || node.endIndex === null) return;
    cuts.push({ start: node.startIndex, end: node.endIndex + 1 });
  };
  for (const element of DomUtils.findAll((e) => RECIPIENT_ONLY_ATTRIBUTE in e.attribs, doc.children)) cut(element);

  const links: AnyNode[] = [
    ...DomUtils.findAll((e) => e.name === 'a' && PREFERENCE_LINK.test(e.attribs.href ?? ''), doc.children),
    ...DomUtils.filter((n) => n.type === 'text' && PREFERENCE_LINK.test(DomUtils.textContent(n)), doc.children, true),
  ];
  for (const link of links) {
    const parent = link.parent as Element | null;
    const rest = parent && REMOVABLE_BLOCKS.has(parent.name) ? DomUtils.textContent(parent).replace(DomUtils.textContent(link), '') : undefined;
    // A placeholder inside the block's other text is not the block's only content.
    cut(rest !== undefined && NOTHING_LEFT.test(rest) && !parent!.children.some((c) => c !== link && c.type === 'tag' && !links.includes(c)) ? parent! : link);
  }
  if (!cuts.length) return html;
  // Outer cuts first; a cut inside one already made is skipped.
  cuts.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const { start, end } of cuts) {
    if (start < at) {
      at = Math.max(at, end);
      continue;
    }
    out += html.slice(at, start);
    at = end;
  }
  return out + html.slice(at);
}
