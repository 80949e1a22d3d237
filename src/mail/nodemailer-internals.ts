// The parts of nodemailer used below its documented entry point (its `lib/*` modules): its
// quoted-printable encoder and its MIME tree, so mail built here follows nodemailer's own
// encoding rules. An upgrade that moves them breaks here and nowhere else.
import MimeNode from 'nodemailer/lib/mime-node';
import { encode, wrap } from 'nodemailer/lib/qp';

export { MimeNode };

/** Quoted-printable encoding of text (no line wrapping: see wrapQuotedPrintable). */
export const encodeQuotedPrintable: (text: string) => string = encode;

/** Soft line breaks (`=` CRLF) so no line of an encoded text passes `lineLength`. */
export const wrapQuotedPrintable: (encoded: string, lineLength: number) => string = wrap;
