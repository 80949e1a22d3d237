import fs from 'node:fs';
import path from 'node:path';
import iconv from 'iconv-lite';
import Papa from 'papaparse';
import { csvChunks, CsvDialect, CsvRecord, MAX_RECORD_CHARS, UNCLOSED_QUOTE } from '../../src/lib/csv';
import { TMP_DIR } from '../support/test-db';

describe('csvChunks', () => {
  const file = path.join(TMP_DIR, `csv-chunks-${process.pid}.csv`);
  afterAll(() => fs.rmSync(file, { force: true }));

  async function read(content: string | Buffer, chunkBytes: number, encoding?: string): Promise<{ rows: CsvRecord[]; dialect?: CsvDialect }> {
    fs.mkdirSync(TMP_DIR, { recursive: true });
    fs.writeFileSync(file, content);
    const rows: CsvRecord[] = [];
    let dialect: CsvDialect | undefined;
    for await (const chunk of csvChunks(file, { chunkBytes, encoding, onDialect: (d) => (dialect = d) })) rows.push(...chunk);
    return { rows, dialect };
  }
  const rowsOf = async (content: string | Buffer, chunkBytes: number) => (await read(content, chunkBytes)).rows;

  test('when rows, quotes and multi-byte characters cross chunk boundaries then the rows equal a whole-file parse', async () => {
    const text = 'name,note\r\n"Zoë ""Z""","line one\r\nline two, still"\r\n李,"a,b"\r\nlast,no newline at end';
    const whole = Papa.parse<string[]>(text).data;
    for (const size of [3, 7, 16, 1 << 20]) {
      expect(await rowsOf(text, size)).toEqual(whole);
    }
    expect(whole[1]).toEqual(['Zoë "Z"', 'line one\r\nline two, still']);
  });

  test('when the file starts with a byte-order mark then the first header cell is clean', async () => {
    expect(await rowsOf('\uFEFFemail\na@example.com\n', 4)).toEqual([['email'], ['a@example.com']]);
  });

  test('when a quote is never closed then that row is one broken record and every later line is still read', async () => {
    const lines = ['email,name', 'a@example.com,Ann', 'b@example.com,"Bob', 'c@example.com,Cy', 'd@example.com,Di'];
    const expected = [['email', 'name'], ['a@example.com', 'Ann'], { broken: UNCLOSED_QUOTE }, ['c@example.com', 'Cy'], ['d@example.com', 'Di']];
    for (const size of [5, 1 << 16]) expect(await rowsOf(lines.join('\n') + '\n', size)).toEqual(expected);
  });

  test('when an unclosed quote is followed by more than a record may hold then memory stays bounded and the rest is read', async () => {
    const many = Array.from({ length: 60_000 }, (_, i) => `user${i}@example.com,Name ${i}`);
    const text = ['email,name', 'first@example.com,"never closed', ...many].join('\n') + '\n';
    expect(text.length).toBeGreaterThan(MAX_RECORD_CHARS);
    const rows = await rowsOf(text, 1 << 16);
    expect(rows[1]).toEqual({ broken: UNCLOSED_QUOTE });
    expect(rows).toHaveLength(2 + 60_000);
    expect(rows[rows.length - 1]).toEqual(['user59999@example.com', 'Name 59999']);
  });

  test('when the file is Windows-1252, UTF-16 or pipe-separated then it is decoded and split right', async () => {
    const text = 'email;city\r\nfrancois@example.com;Köln – Mitte\r\n';
    const latin = await read(iconv.encode(text, 'windows-1252'), 5);
    expect(latin.dialect).toEqual({ encoding: 'windows-1252', delimiter: ';' });
    expect(latin.rows[1]).toEqual(['francois@example.com', 'Köln – Mitte']);
    const le = await read(Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, 'utf-16le')]), 7);
    expect(le.dialect).toEqual({ encoding: 'utf-16le', delimiter: ';' });
    expect(le.rows[1]).toEqual(['francois@example.com', 'Köln – Mitte']);
    const be = await read(Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(text, 'utf-16be')]), 1 << 16);
    expect(be.rows).toEqual([['email', 'city'], ['francois@example.com', 'Köln – Mitte']]);
    const pipes = await read('email|city\na@example.com|Paris\n', 1 << 16);
    expect(pipes.dialect).toEqual({ encoding: 'utf-8', delimiter: '|' });
    expect(pipes.rows[1]).toEqual(['a@example.com', 'Paris']);
  });

  test('when a UTF-8-looking file turns Windows-1252 after its first chunk then the later rows are decoded as Windows-1252', async () => {
    const ascii = Array.from({ length: 2000 }, (_, i) => `user${i}@example.com,Plain`).join('\n');
    const content = Buffer.concat([Buffer.from(`email,name\n${ascii}\n`), iconv.encode('late@example.com,Françoise\n', 'windows-1252')]);
    const rows = await rowsOf(content, 4096);
    expect(rows[rows.length - 1]).toEqual(['late@example.com', 'Françoise']);
    expect(JSON.stringify(rows)).not.toContain('\uFFFD');
  });
});
