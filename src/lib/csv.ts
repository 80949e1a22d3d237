import fs from 'node:fs';
import Papa from 'papaparse';

/**
 * Reads a CSV file as arrays of rows, one array per chunk read from disk, with papaparse's
 * parser. The file is read as it is consumed (an async generator), so memory holds one chunk
 * whatever the file's size, and a slow consumer slows the reading. Driving papaparse's Parser
 * from our own reads, rather than through its Node stream (one object per row), parses about
 * twice as fast; the chunk logic is papaparse's own: parse all but the last, possibly partial,
 * row and carry that over to the next chunk.
 */
export async function* csvChunks(file: string, chunkBytes = 1 << 16): AsyncGenerator<string[][]> {
  const stream = fs.createReadStream(file, { encoding: 'utf8', highWaterMark: chunkBytes });
  let parser: Papa.Parser | undefined;
  let carry = '';
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      const input = parser || carry ? carry + chunk : chunk.replace(/^\uFEFF/, '');
      if (!parser) {
        // Guess the dialect from a whole first line (or 64 KiB of one).
        carry = input;
        if (!input.includes('\n') && input.length < 64 * 1024) continue;
        parser = newParser(input);
      }
      const result = parser.parse(input, 0, true);
      carry = input.slice(result.meta.cursor);
      if (result.data.length > 0) yield result.data as string[][];
    }
    if (carry !== '') {
      const result = (parser ?? newParser(carry)).parse(carry, 0, false);
      if (result.data.length > 0) yield result.data as string[][];
    }
  } finally {
    stream.destroy();
  }
}

function newParser(sample: string): Papa.Parser {
  return new Papa.Parser(dialectOf(sample));
}

/** Delimiter (comma, semicolon or tab) and line ending, guessed by papaparse from the start of the file. */
function dialectOf(sample: string): Papa.ParseConfig {
  const { meta } = Papa.parse(sample.slice(0, 64 * 1024), { preview: 2, delimitersToGuess: [',', ';', '\t'] });
  return { delimiter: meta.delimiter || ',', newline: (meta.linebreak || '\n') as Papa.ParseConfig['newline'] };
}

/** True for a row that holds nothing (a blank line). */
export function isBlankRow(row: string[]): boolean {
  return row.every((cell) => cell.trim() === '');
}

/** A CSV text from a header and rows (quoted where needed). */
export function toCsv(fields: string[], rows: unknown[][]): string {
  return Papa.unparse({ fields, data: rows }, { newline: '\r\n' }) + '\r\n';
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
