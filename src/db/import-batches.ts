import type { Knex } from 'knex';
import { isPostgres } from './index';

/**
 * An import's batch of rows as it waits for its write, in the form each database's upsert
 * (contact-upsert.ts) takes: what waits costs the garbage collector as little as possible.
 */

/**
 * A batch's rows in the form its database path writes: COPY text lines on PostgreSQL (a later
 * line of the same email wins in the merge); on SQLite the values of rows with unique emails
 * (a later row replaced the earlier one) back to back, `width` values a row, JSON as text;
 * `count` is the rows of the file the batch stands for, repeats included: each repeat counts
 * as an update.
 */
export interface EncodedRows {
  rows: Buffer | unknown[];
  /** Values per row (SQLite). */
  width?: number;
  count: number;
}

/**
 * A batch being filled, in file order; the newest row can be moved to start the next batch.
 * Made once per lane and reused (`clear`) once written, so a long import allocates nothing per batch.
 */
export interface ImportRows {
  /** How full the batch is (rows put; SQLite's batches count a repeated email once). */
  readonly size: number;
  /** Adds a row of values (in the upsert's column order) whose email key is `key`. */
  put(key: string, values: unknown[]): void;
  /** Moves the newest row into `next` (empty), as its first row. */
  moveLastTo(next: ImportRows): void;
  /** The rows as `upsertContacts` takes them (valid until `clear`). */
  encoded(): EncodedRows;
  /** The batch's email keys, each once (only asked when someone listens for joins). */
  keys(): string[];
  clear(): void;
}

/** An empty batch of the form the database's path writes. */
export function newImportRows(db: Knex): ImportRows {
  return isPostgres(db) ? new CopyRows() : new ValueRows();
}

/**
 * SQLite: the values of the batch's rows back to back in one array, exactly the parameters of
 * its statements (a JSON value already as text), a repeated email overwriting its earlier row
 * in place, as a sequential upsert would leave it. A row's values array and custom-field object
 * die as soon as it is put, so what waits for the write is one array of strings: cheaper for
 * the garbage collector than an array and an object per row, and no copy when written.
 */
class ValueRows implements ImportRows {
  private values: unknown[] = [];
  private width = 0;
  private positions = new Map<string, number>();
  private repeats = 0;
  private lastKey = '';

  /** Distinct emails: a repeat replaces a row, so only a new email fills the batch. */
  get size(): number {
    return this.positions.size;
  }

  put(key: string, values: unknown[]): void {
    const width = values.length;
    this.width = width;
    const earlier = this.positions.get(key);
    let at: number;
    if (earlier !== undefined) {
      at = earlier * width;
      this.repeats += 1;
    } else {
      at = this.values.length;
      this.positions.set(key, at / width);
      this.lastKey = key;
    }
    for (let k = 0; k < width; k += 1) {
      const value = values[k];
      this.values[at + k] = value !== null && typeof value === 'object' ? JSON.stringify(value) : value;
    }
  }

  moveLastTo(next: ImportRows): void {
    // The newest row is the last one added: the batch filled up when it was added.
    const from = this.values.length - this.width;
    next.put(this.lastKey, this.values.slice(from));
    this.values.length = from;
    this.positions.delete(this.lastKey);
  }

  encoded(): EncodedRows {
    return { rows: this.values, width: this.width, count: this.positions.size + this.repeats };
  }

  keys(): string[] {
    return [...this.positions.keys()];
  }

  clear(): void {
    this.values = [];
    this.positions = new Map();
    this.repeats = 0;
  }
}

/**
 * PostgreSQL: COPY text lines in one Buffer, in file order, repeats and all: the merge keeps
 * the last line of each email (see `upsertPostgres`). Nothing per row stays on the JS heap, so
 * a batch waiting for its write is never promoted into the old generation.
 */
class CopyRows implements ImportRows {
  private bytes = Buffer.allocUnsafeSlow(2 << 20);
  private end = 0;
  /** Where the newest line starts. */
  private lastStart = 0;
  size = 0;

  put(_key: string, values: unknown[]): void {
    this.append(copyLine(values));
  }

  moveLastTo(next: ImportRows): void {
    (next as CopyRows).append(this.bytes.toString('utf8', this.lastStart, this.end));
    this.end = this.lastStart;
    this.size -= 1;
  }

  encoded(): EncodedRows {
    return { rows: this.bytes.subarray(0, this.end), count: this.size };
  }

  keys(): string[] {
    // The second value of each line is the email key (`email`, `email_key`, … in every import).
    const keys = new Set<string>();
    for (const line of this.bytes.toString('utf8', 0, this.end).split('\n')) {
      if (line !== '') keys.add(fromCopyText(line.split('\t')[1]));
    }
    return [...keys];
  }

  clear(): void {
    this.end = 0;
    this.size = 0;
  }

  private append(line: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    if (this.end + line.length * 3 > this.bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(this.bytes.length * 2, this.end + line.length * 3));
      this.bytes.copy(grown, 0, 0, this.end);
      this.bytes = grown;
    }
    this.lastStart = this.end;
    this.end += this.bytes.write(line, this.end, 'utf8');
    this.size += 1;
  }
}

/** A row as one line of COPY's text format, newline included. */
function copyLine(values: unknown[]): string {
  let line = copyText(values[0]);
  for (let i = 1; i < values.length; i += 1) line += `\t${copyText(values[i])}`;
  return `${line}\n`;
}

/** A value in COPY's text format: `\N` for null; backslash, tab and line breaks escaped. */
function copyText(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  return COPY_SPECIAL.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]) : text;
}
const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const COPY_UNESCAPES: Record<string, string> = { '\\': '\\', t: '\t', n: '\n', r: '\r' };

/** A value written by `copyText` (not null) read back. */
function fromCopyText(text: string): string {
  return text.includes('\\') ? text.replace(/\\(.)/g, (_, c: string) => COPY_UNESCAPES[c]) : text;
}

