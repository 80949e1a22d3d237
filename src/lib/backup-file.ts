import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import zlib from 'node:zlib';
import { purposeKey } from './crypto';

/**
 * The backup file: gzip-compressed JSON lines, written and read as a stream.
 *
 *   {"format":"campaign-service-backup","version":1,"schema":…,"migrations":[…],…}   header
 *   {"table":"accounts","columns":["id","email",…]}                                 a table begins
 *   [1,"owner@example.com",…]                                                        one line per row
 *   {"end":"accounts","rows":1,"sha256":"…"}                                         its row lines' checksum
 *   …
 *   {"done":true,"tables":40,"rows":1234,"hmac":"…"}                                every line above, signed
 *
 * A file cut short misses its last line (or its gzip trailer); a changed byte breaks the gzip
 * checksum, a line's JSON or a sha256 line: the reader says which, before anything is loaded.
 * The last line signs every line above with a key derived from the app secret (HMAC-SHA256):
 * checksums alone can be computed again by whoever edits a file, the signature only by an install
 * holding the secret, which the restore needs anyway to open the secrets sealed in the rows.
 */
export const BACKUP_FORMAT = 'campaign-service-backup';
/** 2: signed (1 had a plain sha256 of the whole, which an edited file could carry again). */
export const BACKUP_VERSION = 2;

/** The signature of a backup's lines, keyed by the app secret for this one purpose. */
export function backupSignature(appSecret: string): crypto.Hmac {
  return crypto.createHmac('sha256', purposeKey(appSecret, 'backup-signature'));
}

export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  version: number;
  /** The latest migration the database had run: the schema the rows fit. */
  schema: string;
  /** Every migration the database had run, in the order it ran them. */
  migrations: string[];
  /** `postgres` or `sqlite`: where the rows came from. */
  source: string;
  created_at: string;
}

export type BackupEntry =
  | { kind: 'header'; header: BackupHeader }
  | { kind: 'table'; name: string; columns: string[] }
  | { kind: 'row'; values: unknown[] }
  | { kind: 'end'; name: string; rows: number }
  | { kind: 'done'; tables: number; rows: number };

/** The file cannot be read as a whole, intact backup. */
export class BackupFileError extends Error {}

/** The file is whole but its signature is not this app secret's: changed after it was written, or from another install. */
export class BackupSignatureError extends BackupFileError {}

const sha256 = () => crypto.createHash('sha256');

/** About 64 KiB of text per write to gzip. */
const CHUNK_CHARS = 64 * 1024;

/** Writes a backup to a temporary file beside `file`, renamed to `file` only once complete. */
export class BackupWriter {
  private readonly partial: string;
  private readonly gzip = zlib.createGzip();
  private readonly written: Promise<void>;
  private readonly whole: crypto.Hmac;
  private table: { name: string; rows: number; hash: crypto.Hash } | undefined;
  private tables = 0;
  private rows = 0;
  // Lines gathered into chunks: gzip works a chunk per write, and a write per line costs it tenfold.
  private pending: string[] = [];
  private pendingBytes = 0;

  constructor(private readonly file: string, appSecret: string) {
    this.whole = backupSignature(appSecret);
    this.partial = `${file}.partial-${process.pid}`;
    this.written = pipeline(this.gzip, fs.createWriteStream(this.partial, { flags: 'wx', mode: 0o600 }));
    // Seen by whoever awaits it; until then an early failure must not be an unhandled rejection.
    this.written.catch(() => undefined);
  }

  private async line(text: string, hashed = true): Promise<void> {
    const line = `${text}\n`;
    if (hashed) this.whole.update(line);
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (this.pendingBytes >= CHUNK_CHARS) await this.flush();
  }

  private async flush(): Promise<void> {
    if (!this.pending.length) return;
    const chunk = this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    if (!this.gzip.write(chunk)) await Promise.race([once(this.gzip, 'drain'), this.written]);
  }

  header(header: Omit<BackupHeader, 'format' | 'version'>): Promise<void> {
    return this.line(JSON.stringify({ format: BACKUP_FORMAT, version: BACKUP_VERSION, ...header }));
  }

  beginTable(name: string, columns: string[]): Promise<void> {
    this.table = { name, rows: 0, hash: sha256() };
    return this.line(JSON.stringify({ table: name, columns }));
  }

  row(values: unknown[]): Promise<void> {
    const text = JSON.stringify(values);
    this.table!.hash.update(`${text}\n`);
    this.table!.rows += 1;
    return this.line(text);
  }

  async endTable(): Promise<void> {
    const { name, rows, hash } = this.table!;
    this.tables += 1;
    this.rows += rows;
    this.table = undefined;
    await this.line(JSON.stringify({ end: name, rows, sha256: hash.digest('hex') }));
  }

  /** Writes the last line and publishes the file; answers what it holds. */
  async finish(): Promise<{ tables: number; rows: number }> {
    await this.line(JSON.stringify({ done: true, tables: this.tables, rows: this.rows, hmac: this.whole.digest('hex') }), false);
    await this.flush();
    this.gzip.end();
    await this.written;
    fs.renameSync(this.partial, this.file);
    return { tables: this.tables, rows: this.rows };
  }

  /** Leaves nothing behind after a failure. */
  async abort(): Promise<void> {
    this.gzip.destroy();
    await this.written.catch(() => undefined);
    fs.rmSync(this.partial, { force: true });
  }
}

/** The file's lines, decompressed as they are read; an unreadable or cut-off stream throws BackupFileError. */
async function* lines(file: string): AsyncGenerator<string> {
  const input = fs.createReadStream(file);
  const gunzip = zlib.createGunzip();
  input.on('error', (err) => gunzip.destroy(err));
  input.pipe(gunzip);
  const decoder = new StringDecoder('utf8');
  let rest = '';
  try {
    for await (const chunk of gunzip) {
      rest += decoder.write(chunk as Buffer);
      let start = 0;
      for (let end = rest.indexOf('\n'); end !== -1; end = rest.indexOf('\n', start)) {
        yield rest.slice(start, end);
        start = end + 1;
      }
      rest = rest.slice(start);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new BackupFileError('no such file');
    if (code?.startsWith('Z_')) {
      throw new BackupFileError((err as Error).message === 'incorrect header check' ? 'not a gzip file' : `the compressed data is truncated or corrupted (${(err as Error).message})`);
    }
    throw err;
  } finally {
    input.destroy();
  }
  if (rest + decoder.end()) throw new BackupFileError('the last line is cut off');
}

function parse(line: string, at: number): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new BackupFileError(`line ${at} is not JSON`);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads a backup entry by entry, checking as it goes: the header first, rows only inside a
 * table, each table's row count and checksum at its end, the signature of every line with
 * `appSecret` on the last line, and nothing after it. A file that ends before its last line is
 * reported as truncated.
 */
export async function* readBackup(file: string, appSecret: string): AsyncGenerator<BackupEntry> {
  const whole = backupSignature(appSecret);
  let at = 0;
  let header: BackupHeader | undefined;
  let table: { name: string; columns: number; rows: number; hash: crypto.Hash } | undefined;
  let tables = 0;
  let rows = 0;
  let done = false;
  for await (const line of lines(file)) {
    at += 1;
    if (done) throw new BackupFileError(`line ${at} follows the end of the backup`);
    const value = parse(line, at);
    if (!header) {
      if (!isObject(value) || value.format !== BACKUP_FORMAT) throw new BackupFileError('it is not a backup of this service');
      if (value.version === 1) {
        throw new BackupSignatureError('it is an unsigned backup of an older version (format 1), which this version does not trust: restore it with the version that wrote it, then upgrade');
      }
      if (value.version !== BACKUP_VERSION) throw new BackupFileError(`its format version ${String(value.version)} is not ${BACKUP_VERSION}`);
      if (typeof value.schema !== 'string' || !Array.isArray(value.migrations)) throw new BackupFileError('its header has no schema');
      header = value as unknown as BackupHeader;
      whole.update(`${line}\n`);
      yield { kind: 'header', header };
      continue;
    }
    if (Array.isArray(value)) {
      if (!table) throw new BackupFileError(`line ${at}: a row outside a table`);
      if (value.length !== table.columns) throw new BackupFileError(`line ${at}: ${value.length} values for ${table.columns} columns`);
      table.hash.update(`${line}\n`);
      table.rows += 1;
      whole.update(`${line}\n`);
      yield { kind: 'row', values: value };
      continue;
    }
    if (!isObject(value)) throw new BackupFileError(`line ${at} is neither a row nor a marker`);
    if (typeof value.table === 'string' && Array.isArray(value.columns) && !table) {
      table = { name: value.table, columns: value.columns.length, rows: 0, hash: sha256() };
      whole.update(`${line}\n`);
      yield { kind: 'table', name: value.table, columns: value.columns.map(String) };
    } else if (typeof value.end === 'string' && table && value.end === table.name) {
      if (value.rows !== table.rows) throw new BackupFileError(`table ${table.name} has ${table.rows} rows, its end line says ${String(value.rows)}`);
      if (value.sha256 !== table.hash.digest('hex')) throw new BackupFileError(`the rows of table ${table.name} do not match their checksum`);
      tables += 1;
      rows += table.rows;
      whole.update(`${line}\n`);
      yield { kind: 'end', name: table.name, rows: table.rows };
      table = undefined;
    } else if (value.done === true && !table) {
      if (value.tables !== tables || value.rows !== rows) throw new BackupFileError('the table and row counts of its last line do not match');
      const expected = Buffer.from(whole.digest('hex'));
      const given = Buffer.from(typeof value.hmac === 'string' ? value.hmac : '');
      if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
        throw new BackupSignatureError('its signature does not match this install\'s app secret: the file was changed after it was written, or it was written by an install with another app secret (set APP_SECRET, or the secret file, to that install\'s)');
      }
      done = true;
      yield { kind: 'done', tables, rows };
    } else {
      throw new BackupFileError(`line ${at} is out of place`);
    }
  }
  if (!header) throw new BackupFileError('it is empty');
  if (!done) throw new BackupFileError('it is truncated (its last line is missing)');
}
