import fs from 'node:fs';
import Papa from 'papaparse';
import { chunkDecoder, detectEncoding } from './csv-decode';

/** The delimiters an uploaded file may use; the first lines decide which one it does. */
export const CSV_DELIMITERS = [',', ';', '\t', '|'];

/**
 * A record longer than this is taken for a quote that is never closed: the parser would
 * otherwise hold the rest of the file as one value (memory growing with the file) and drop
 * it at the end.
 */
export const MAX_RECORD_CHARS = 1 << 20;

/** Bytes read from the file at a time (at least; a larger chunkBytes reads that much). */
const READ_BYTES = 1 << 16;

export interface CsvDialect {
  encoding: string;
  delimiter: string;
}

/** A record that could not be read as values; `reason` says why, in plain words. */
export interface BrokenRecord {
  broken: string;
}

/** A record of the file: its values, or why it could not be read. */
export type CsvRecord = string[] | BrokenRecord;

/**
 * The records parsed from one piece of text. `clean`: that text holds no C0 control character
 * but TAB, LF and CR and no U+FFFD (what decoding leaves for bytes it could not read), so none
 * of its cells does: checked once per piece instead of once per cell.
 */
export type CsvChunk = CsvRecord[] & { clean?: boolean };
const SUSPECT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFD]/;

export const UNCLOSED_QUOTE = 'A quote opened in this row is never closed, so the row could not be read (reading went on at the next line).';
export const MISPLACED_QUOTE = 'A quote in this row is misplaced (a quote inside a value must be doubled), so the row could not be read.';
const TOO_LONG = 'The row is longer than 1 MiB, so it could not be read (reading went on at the next line).';

export interface CsvReadOptions {
  /** Overrides the detected encoding (an iconv-lite name; checked by the caller). */
  encoding?: string;
  chunkBytes?: number;
  /** Hears the encoding and delimiter once they are known, before the first records. */
  onDialect?: (dialect: CsvDialect) => void;
}

export function isBroken(record: CsvRecord): record is BrokenRecord {
  return !Array.isArray(record);
}

/**
 * Reads a CSV file as arrays of records, one array per chunk read from disk, with papaparse's
 * parser. The file is read and decoded as it is consumed (an async generator), so memory
 * holds one chunk whatever the file's size, and a slow consumer slows the reading. Driving
 * papaparse's Parser from our own reads, rather than through its Node stream (one object per
 * row), parses about twice as fast; the chunk logic is papaparse's own: parse all but the
 * last, possibly partial, record and carry that over to the next chunk. A carried record
 * that grows past MAX_RECORD_CHARS, or that is still open at the end of the file, is a quote
 * never closed: it becomes one BrokenRecord and reading resumes at the next line.
 */
export async function* csvChunks(file: string, options: CsvReadOptions = {}): AsyncGenerator<CsvChunk> {
  const { chunkBytes = 1 << 16 } = options;
  // Read ahead in larger pieces, parsed chunkBytes at a time: two buffers in turn, one being
  // parsed while the next read fills the other (no buffer allocated per read).
  const readBytes = Math.max(chunkBytes, READ_BYTES);
  const handle = await fs.promises.open(file, 'r');
  const buffers = [Buffer.allocUnsafeSlow(readBytes), Buffer.allocUnsafeSlow(readBytes)];
  let turn = 0;
  let reading: Promise<{ bytesRead: number; buffer: Buffer }> | undefined;
  let decoder: ReturnType<typeof chunkDecoder> | undefined;
  let parser: Papa.Parser | undefined;
  let carry = '';
  let head: Buffer | undefined;
  const start = (sample: string) => {
    const dialect = dialectOf(sample);
    options.onDialect?.({ encoding: decoder!.encoding, delimiter: dialect.delimiter as string });
    return new Papa.Parser(dialect);
  };
  try {
    reading = handle.read(buffers[turn], 0, readBytes, null);
    for (;;) {
      const { bytesRead, buffer } = await reading;
      reading = undefined;
      if (bytesRead === 0) break;
      turn ^= 1;
      reading = handle.read(buffers[turn], 0, readBytes, null);
      // Valid until the read after next overwrites it: nothing below keeps it (decoders copy what they carry).
      const read = buffer.subarray(0, bytesRead);
      for (let from = 0; from < read.length; from += chunkBytes) {
        const bytes = read.subarray(from, from + chunkBytes);
        if (!decoder) {
          // The encoding is told from the first 4 KiB at least (a chunk may be smaller in tests).
          head = head ? Buffer.concat([head, bytes]) : Buffer.from(bytes);
          if (head.length < 4096) continue;
          decoder = chunkDecoder(options.encoding ?? detectEncoding(head), { fallback: options.encoding === undefined });
        }
        const text = decoder.write(head ?? bytes);
        head = undefined;
        const input = carry + text;
        if (!parser) {
          // Guess the dialect from a whole first line (or 64 KiB of one).
          carry = input;
          if (!input.includes('\n') && input.length < 64 * 1024) continue;
          parser = start(input);
        }
        const records = parseSome(parser, input, false);
        carry = records.carry;
        if (records.rows.length > 0) yield records.rows;
      }
    }
    if (!decoder) {
      if (!head) return;
      decoder = chunkDecoder(options.encoding ?? detectEncoding(head), { fallback: options.encoding === undefined });
      carry += decoder.write(head);
    }
    carry += decoder.end();
    if (carry !== '') {
      const records = parseSome(parser ?? start(carry), carry, true);
      if (records.rows.length > 0) yield records.rows;
    }
  } finally {
    // A consumer that stops early (a preview) leaves a read running: the handle closes after it.
    await reading?.catch(() => undefined);
    await handle.close();
  }
}

/**
 * Parses the complete records of `input` (all of it when `final`), answering them and the
 * unparsed rest. A rest that cannot be a record (too long, or open at the end) is cut at its
 * first line break and reported as broken, and parsing goes on after it.
 */
function parseSome(parser: Papa.Parser, input: string, final: boolean): { rows: CsvChunk; carry: string } {
  const rows: CsvChunk = [];
  rows.clean = !SUSPECT.test(input);
  let rest = input;
  for (;;) {
    const result = parser.parse(rest, 0, true);
    appendRows(rows, result);
    rest = rest.slice(result.meta.cursor);
    if (rest === '') return { rows, carry: '' };
    if (!final && rest.length <= MAX_RECORD_CHARS) return { rows, carry: rest };
    // The last record: complete at the end of the file, or cut off.
    const last = parser.parse(rest, 0, false);
    const open = last.errors.some((e: Papa.ParseError) => e.code === 'MissingQuotes');
    if (final && !open) {
      appendRows(rows, last);
      return { rows, carry: '' };
    }
    rows.push({ broken: open ? UNCLOSED_QUOTE : TOO_LONG });
    const lineEnd = rest.indexOf('\n');
    if (lineEnd < 0) return { rows, carry: '' };
    rest = rest.slice(lineEnd + 1);
  }
}

/** Adds parsed rows, a row with a misplaced quote as broken. */
function appendRows(rows: CsvRecord[], result: Papa.ParseResult<unknown>): void {
  const data = result.data as string[][];
  if (result.errors.length === 0) {
    for (const row of data) rows.push(row);
    return;
  }
  const misplaced = new Set(result.errors.filter((e) => e.code === 'InvalidQuotes').map((e) => e.row));
  data.forEach((row, at) => rows.push(misplaced.has(at) ? { broken: MISPLACED_QUOTE } : row));
}

/** Delimiter and line ending, guessed by papaparse from the start of the file. */
function dialectOf(sample: string): Papa.ParseConfig {
  const { meta } = Papa.parse(sample.slice(0, 64 * 1024), { preview: 10, skipEmptyLines: true, delimitersToGuess: CSV_DELIMITERS });
  return { delimiter: meta.delimiter || ',', newline: (meta.linebreak || '\n') as Papa.ParseConfig['newline'] };
}

/** True for a row that holds nothing (a blank line). */
export function isBlankRow(row: string[]): boolean {
  return row.every((cell) => cell.trim() === '');
}

/**
 * Cells a spreadsheet would run as a formula (CSV injection, OWASP): `=`, `@`, a tab or a
 * carriage return first, or `+`/`-` first unless the rest is a plain number (`-12.5`,
 * `+49 30 1234`). Written with a leading `'`, which spreadsheets read as "this is text";
 * imports take it off again (`unescapeFormula`), so an exported file imports back unchanged.
 */
const FORMULA = /^(?:[=@\t\r]|[+-](?![\d.,\s]*$))/;
const UNPARSE: Papa.UnparseConfig = { newline: '\r\n', escapeFormulae: FORMULA };

/** A CSV text from a header and rows (quoted where needed, formulas escaped). */
export function toCsv(fields: string[], rows: unknown[][]): string {
  return Papa.unparse({ fields, data: rows }, UNPARSE) + '\r\n';
}

/** CSV lines of rows without a header (quoted where needed, formulas escaped), each ending in CRLF. */
export function csvLines(rows: unknown[][]): string {
  return rows.length === 0 ? '' : Papa.unparse(rows, UNPARSE) + '\r\n';
}

/** A cell read from a file: the `'` an export put before a formula-like value is taken off. */
export function unescapeFormula(cell: string): string {
  return cell.charCodeAt(0) === 39 && /^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell;
}

/**
 * The number of lines of a file, read in chunks (a line break inside a quoted cell counts
 * too, so it may exceed the rows a parser finds): a quick total for a progress bar.
 */
export async function countLines(file: string): Promise<number> {
  let lines = 0;
  let last = -1;
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines += 1;
    last = chunk[chunk.length - 1];
  }
  return last === -1 || last === 10 ? lines : lines + 1;
}
