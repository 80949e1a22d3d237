import { encodeQuotedPrintable, wrapQuotedPrintable } from './nodemailer-internals';
import type { Part, Placeholder } from './template';

/**
 * Quoted-printable bodies built from pieces. Each piece is encoded on its own (nodemailer's
 * encoder, lines of at most 76 characters, line breaks as CRLF) and ends with a soft line
 * break (`=` CRLF), which decodes to nothing, so encoded pieces can be joined in any order and
 * the joined body decodes to the joined text.
 */
export function encodePiece(text: string): string {
  if (!text) return '';
  return `${wrapQuotedPrintable(encodeQuotedPrintable(text.replace(/\r?\n/g, '\r\n')), 76)}=\r\n`;
}

/** The encoded literal parts of a template (undefined at placeholders), computed once per template. */
const encodedLiterals = new WeakMap<Part[], (string | undefined)[]>();

/** Joins the parts as renderParts does, quoted-printable encoded; literal parts are encoded once. */
export function encodeParts(parts: Part[], value: (placeholder: Placeholder) => string): string {
  let literals = encodedLiterals.get(parts);
  if (!literals) {
    literals = parts.map((part) => (typeof part === 'string' ? encodePiece(part) : undefined));
    encodedLiterals.set(parts, literals);
  }
  let out = '';
  for (let i = 0; i < parts.length; i += 1) {
    const part = parts[i];
    out += typeof part === 'string' ? literals[i] : encodePiece(value(part));
  }
  return out;
}
