import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/lib/paths';

/**
 * CI's PostgreSQL pass leaves out the files of test/support/once-on-sqlite.js (its SQLite pass runs
 * them). Each entry must name what exists, and the patterns jest builds from them must leave out
 * exactly those files: a renamed file then runs twice rather than not at all, and no pattern
 * catches a file it does not name.
 */
const { ONCE_ON_SQLITE } = require('../support/once-on-sqlite') as { ONCE_ON_SQLITE: string[] };

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === '.tmp' ? [] : testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

function ignorePatterns(pass: string | undefined): RegExp[] {
  const configFile = path.join(PROJECT_ROOT, 'jest.config.js');
  const before = process.env.CI_DB_PASS;
  try {
    if (pass === undefined) delete process.env.CI_DB_PASS;
    else process.env.CI_DB_PASS = pass;
    let config = { testPathIgnorePatterns: [] as string[] };
    jest.isolateModules(() => {
      config = require(configFile);
    });
    return config.testPathIgnorePatterns.map((p) => new RegExp(p.replace('<rootDir>', PROJECT_ROOT)));
  } finally {
    if (before === undefined) delete process.env.CI_DB_PASS;
    else process.env.CI_DB_PASS = before;
  }
}

describe('the files CI runs once, on SQLite', () => {
  const all = testFiles(path.join(PROJECT_ROOT, 'test'));
  const left = (patterns: RegExp[]) => all.filter((file) => patterns.some((p) => p.test(file))).map((file) => path.relative(PROJECT_ROOT, file)).sort();

  test('when the list is read then every entry names an existing test file or a folder of them', () => {
    for (const entry of ONCE_ON_SQLITE) {
      const full = path.join(PROJECT_ROOT, entry);
      expect({ entry, exists: fs.existsSync(full) }).toEqual({ entry, exists: true });
      if (entry.endsWith('/')) expect({ entry, tests: testFiles(full).length > 0 }).toEqual({ entry, tests: true });
      else expect(entry).toMatch(/\.test\.ts$/);
    }
  });

  test('when CI_DB_PASS is postgres then jest leaves out exactly the listed files, and otherwise none', () => {
    const listed = all
      .map((file) => path.relative(PROJECT_ROOT, file))
      .filter((file) => ONCE_ON_SQLITE.some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry)))
      .sort();
    expect(listed.length).toBeGreaterThan(ONCE_ON_SQLITE.length);
    expect(left(ignorePatterns('postgres'))).toEqual(listed);
    expect(left(ignorePatterns(undefined))).toEqual([]);
  });
});
