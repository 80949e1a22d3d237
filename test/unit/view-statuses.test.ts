import fs from 'node:fs';
import path from 'node:path';
import { AUTOMATION_STATUS, SINGLE_SEND_STATUS } from '../../src/lib/constants';
import { PROJECT_ROOT } from '../../src/lib/paths';

/**
 * Views compare a record's status by its name in lib/constants.ts (`statusName`, given by
 * src/web/statuses.ts), never by its stored number: a renumbered status then changes one file,
 * and a misspelt name fails here instead of silently never matching.
 */
const VIEWS = path.join(PROJECT_ROOT, 'views');
const KNOWN = new Set([...Object.keys(SINGLE_SEND_STATUS), ...Object.keys(AUTOMATION_STATUS)]);

function templates(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return templates(full);
    return entry.name.endsWith('.njk') ? [full] : [];
  });
}

const sources = templates(VIEWS).map((file) => ({ file: path.relative(PROJECT_ROOT, file), text: fs.readFileSync(file, 'utf8') }));

describe('status comparisons in views', () => {
  test('when a view tests a status then it names it instead of comparing a number', () => {
    const numeric = sources.flatMap(({ file, text }) =>
      [...text.matchAll(/\.status\s*(?:==|!=|<=?|>=?)\s*\d|\d\s*(?:==|!=|<=?|>=?)\s*[\w.]*\.status\b/g)].map((m) => `${file}: ${m[0]}`),
    );
    expect(numeric).toEqual([]);
  });

  test('when a view compares status names then each is a status of lib/constants.ts', () => {
    const compared = sources.flatMap(({ file, text }) =>
      [...text.matchAll(/statusName\s*(?:==|!=)\s*'([^']*)'|statusName\s+in\s+\[([^\]]*)\]/g)].flatMap((m) =>
        (m[1] !== undefined ? [m[1]] : [...m[2].matchAll(/'([^']*)'/g)].map((n) => n[1])).map((name) => ({ file, name })),
      ),
    );
    expect(compared.length).toBeGreaterThan(0);
    expect(compared.filter(({ name }) => !KNOWN.has(name))).toEqual([]);
  });
});
