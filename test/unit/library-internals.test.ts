import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/lib/paths';

/**
 * A module below a library's documented entry point (`knex/lib/…`, `nodemailer/lib/…`) may
 * change in any release. Each library whose internals src/ uses has one adapter file named for
 * it (`<library>-internals.ts`), so an upgrade breaks in one named place; a file that reaches
 * into a library anywhere else fails here. (`require.resolve` of a file the dashboard serves,
 * such as htmx's built script, names a file, not code, and is left out.)
 */
function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

const INTERNAL = /(?:\bfrom\s+|\bimport\s*\(\s*|(?<!\.resolve)\brequire\(\s*)'((?:@[\w.-]+\/)?(?!\.)[\w.-]+)\/(?:lib|dist|build|src|cjs|esm|internal)\/[^']*'/g;

/** Every reach into a library's internals under these folders: file → the libraries it reaches into. */
function reaches(dirs: string[]): { file: string; library: string }[] {
  return dirs.flatMap((dir) => sourceFiles(path.join(PROJECT_ROOT, dir))).flatMap((file) =>
    [...fs.readFileSync(file, 'utf8').matchAll(INTERNAL)].map((m) => ({ file: path.relative(PROJECT_ROOT, file), library: m[1] })),
  );
}

const adapterName = (library: string) => `${library.replace(/^@/, '').replace(/[/.]/g, '-')}-internals.ts`;

describe('library internals', () => {
  test('when src/ or bench/ uses a module below a library\'s entry point then it does so only in that library\'s adapter file', () => {
    const found = reaches(['src', 'bench']);
    const misplaced = found.filter(({ file, library }) => path.basename(file) !== adapterName(library)).map(({ file, library }) => `${file} reaches into ${library}: move it to ${adapterName(library)}`);
    expect(misplaced).toEqual([]);
    // The adapters this check knows, so a broken pattern that finds nothing cannot pass.
    expect([...new Set(found.map((f) => f.library))].sort()).toEqual(['knex', 'mailauth', 'nodemailer']);
  });

  test('when a file imports a library\'s internals outside its adapter then the check names it', () => {
    const text = "import MimeNode from 'nodemailer/lib/mime-node';\nconst x = require('knex/lib/dialects/better-sqlite3');\nconst y = require.resolve('htmx.org/dist/htmx.min.js');";
    expect([...text.matchAll(INTERNAL)].map((m) => m[1])).toEqual(['nodemailer', 'knex']);
  });
});
