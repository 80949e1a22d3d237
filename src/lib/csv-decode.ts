import { isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';

/**
 * Turning the bytes of an uploaded CSV into text, chunk by chunk (a file is never read whole).
 *
 * The rule (docs/import-export.md, "Encodings"): a byte-order mark decides (UTF-8, UTF-16 LE or BE); otherwise
 * text that is valid UTF-8 is UTF-8, and anything else is Windows-1252, the encoding European
 * Excel writes. UTF-8 validity is exact (Node's built-in validator), so no statistics are
 * needed; the Windows-1252 and UTF-16 tables are iconv-lite's. A file that starts as valid
 * UTF-8 (plain ASCII, say) and turns out not to be further on is decoded as Windows-1252 from
 * the chunk where that shows, so a late `é` written by Excel is not turned into U+FFFD.
 */

export const DEFAULT_FALLBACK_ENCODING = 'windows-1252';

export interface ChunkDecoder {
  /** The encoding used (it may change once, from utf-8 to windows-1252). */
  readonly encoding: string;
  write(chunk: Buffer): string;
  end(): string;
}

/** True when iconv-lite knows the name (the `encoding` parameter is checked with it). */
export function isKnownEncoding(name: string): boolean {
  return iconv.encodingExists(name);
}

/** The encoding of a file from its first bytes (see above). */
export function detectEncoding(head: Buffer): string {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  const utf16 = utf16WithoutBom(head);
  if (utf16) return utf16;
  return isUtf8(head.subarray(0, completeUtf8Length(head))) ? 'utf-8' : DEFAULT_FALLBACK_ENCODING;
}

/**
 * UTF-16 written without a mark: text of Latin letters has a zero byte in every other place
 * (a zero byte is valid UTF-8, so the check above would take it for UTF-8).
 */
function utf16WithoutBom(head: Buffer): string | undefined {
  const pairs = Math.min(head.length, 1024) >> 1;
  if (pairs < 4) return undefined;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < pairs * 2; i += 2) {
    if (head[i] === 0) evenZeros += 1;
    if (head[i + 1] === 0) oddZeros += 1;
  }
  if (oddZeros > pairs * 0.4 && evenZeros === 0) return 'utf-16le';
  if (evenZeros > pairs * 0.4 && oddZeros === 0) return 'utf-16be';
  return undefined;
}

/** The length of `buf` without a UTF-8 sequence cut at its end (kept for the next chunk). */
function completeUtf8Length(buf: Buffer): number {
  const end = buf.length;
  for (let back = 1; back <= Math.min(3, end); back += 1) {
    const byte = buf[end - back];
    if ((byte & 0xc0) !== 0x80) {
      // A lead byte: the sequence it starts needs this many bytes.
      const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return needs > back ? end - back : end;
    }
  }
  return end;
}

/**
 * A decoder for `encoding` (a detected one, or the caller's override). Detected UTF-8 falls
 * back to Windows-1252 as described above; an override is followed as given.
 */
export function chunkDecoder(encoding: string, { fallback = true } = {}): ChunkDecoder {
  const name = iconv.encodingExists(encoding) ? encoding : 'utf-8';
  const utf8 = /^utf-?8$/i.test(name);
  if (!utf8 || !fallback) {
    const decoder = iconv.getDecoder(name, { stripBOM: true });
    return { encoding: name.toLowerCase(), write: (chunk) => decoder.write(chunk), end: () => decoder.end() ?? '' };
  }
  let current = 'utf-8';
  let other: ReturnType<typeof iconv.getDecoder> | undefined;
  let pending: Buffer | undefined;
  let first = true;
  return {
    get encoding() {
      return current;
    },
    write(chunk) {
      if (other) return other.write(chunk);
      let buf = pending ? Buffer.concat([pending, chunk]) : chunk;
      pending = undefined;
      if (first) {
        first = false;
        if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
      }
      const cut = completeUtf8Length(buf);
      if (!isUtf8(buf.subarray(0, cut))) {
        current = DEFAULT_FALLBACK_ENCODING;
        other = iconv.getDecoder(DEFAULT_FALLBACK_ENCODING);
        return other.write(buf);
      }
      if (cut < buf.length) pending = Buffer.from(buf.subarray(cut));
      return buf.toString('utf8', 0, cut);
    },
    end() {
      if (other) return other.end() ?? '';
      if (!pending) return '';
      // A sequence cut off by the end of the file is not UTF-8.
      current = DEFAULT_FALLBACK_ENCODING;
      return iconv.decode(pending, DEFAULT_FALLBACK_ENCODING);
    },
  };
}
