import fs from 'node:fs';
import path from 'node:path';
import Papa from 'papaparse';
import { csvChunks } from '../../src/lib/csv';
import { TMP_DIR } from '../support/test-db';

describe('csvChunks', () => {
  const file = path.join(TMP_DIR, `csv-chunks-${process.pid}.csv`);
  afterAll(() => fs.rmSync(file, { force: true }));

  async function rowsOf(text: string, chunkBytes: number): Promise<string[][]> {
    fs.mkdirSync(TMP_DIR, { recursive: true });
    fs.writeFileSync(file, text);
    const rows: string[][] = [];
    for await (const chunk of csvChunks(file, chunkBytes)) rows.push(...chunk);
    return rows;
  }

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
});
