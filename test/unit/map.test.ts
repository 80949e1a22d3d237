import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/lib/paths';

/**
 * docs/architecture.md is the one map of src/: under a heading naming a folder
 * (### `src/services/audience/`), one line per file of that folder (- `contacts.ts`: …).
 * A file of src/ missing from the map, or a listed file that no longer exists, fails here.
 */
const MAP = path.join(PROJECT_ROOT, 'docs', 'architecture.md');
const SRC = path.join(PROJECT_ROOT, 'src');

/** The files the map lists, as paths from the project folder (`src/db/index.ts`), in the map's order. */
export function mapEntries(markdown: string): string[] {
  const entries: string[] = [];
  let folder: string | undefined;
  for (const line of markdown.split('\n')) {
    const heading = /^#{2,6} `(src\/(?:[\w.-]+\/)*)`\s*$/.exec(line);
    if (heading) {
      folder = heading[1];
      continue;
    }
    // Any other heading ends a folder's list.
    if (/^#{1,6} /.test(line)) folder = undefined;
    const item = /^- `([^`/]+)`/.exec(line);
    if (item && folder) entries.push(`${folder}${item[1]}`);
  }
  return entries;
}

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(full) : [path.relative(PROJECT_ROOT, full).split(path.sep).join('/')];
  });
}

describe('the map of src/ (docs/architecture.md)', () => {
  const listed = mapEntries(fs.readFileSync(MAP, 'utf8'));
  const files = filesUnder(SRC);

  test('when a file is added under src/ then the map lists it under its folder', () => {
    const missing = files.filter((f) => !listed.includes(f));
    expect(missing.map((f) => `${f}: add "- \`${path.posix.basename(f)}\`: what it holds" under ### \`${path.posix.dirname(f)}/\` in docs/architecture.md`)).toEqual([]);
  });

  test('when a file is moved or removed then the map no longer lists it, and lists no file twice', () => {
    expect(listed.filter((f) => !files.includes(f)).map((f) => `${f} is in docs/architecture.md but not in src/`)).toEqual([]);
    expect(listed.filter((f, i) => listed.indexOf(f) !== i)).toEqual([]);
  });

  test('when the map is read then each folder heading gathers the file lines below it, and other headings end the list', () => {
    const sample = [
      '### `src/`',
      '- `app.ts`: the app',
      '### `src/services/delivery/ledger/`',
      'A room.',
      '- `index.ts`: its door',
      '- `expand.ts`: rows',
      '## Elsewhere',
      '- `not-a-file.ts`: a list outside the map',
    ].join('\n');
    expect(mapEntries(sample)).toEqual(['src/app.ts', 'src/services/delivery/ledger/index.ts', 'src/services/delivery/ledger/expand.ts']);
    expect(listed.length).toBeGreaterThan(200);
  });
});
