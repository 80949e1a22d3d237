#!/usr/bin/env node
/**
 * The second half of `npm run build`: bundles the compiled server (dist/src/server.js, from tsc)
 * with the packages it loads at start into one file, dist/bundle/server.js, which `npm start`
 * runs through dist/src/start.js (from V8's code cache). A start then reads one file instead of
 * resolving and compiling about a thousand (issue 15: start to the first answer, memory at rest).
 *
 * Left out, and loaded from node_modules as before when a process needs them:
 * - drivers knex can name but this service never uses, and the native SQLite binding;
 * - packages whose own files are read by path at run time (require.resolve);
 * - what only some processes load, and only when they need it: mail parsing (Outbox,
 *   bounces), HTML-to-text, the bounce listener and the IMAP client. Kept in the bundle they
 *   would not run, but their source would be held in every process. The PostgreSQL driver is
 *   in the bundle (140 KB of source): loaded from node_modules, resolving and compiling its
 *   files without a cache took ~45 ms of every start on PostgreSQL (0.25 → 0.20 s to the
 *   first answer).
 *
 * The output is written in ASCII only (esbuild escapes strings; this escapes the characters
 * left in regular expressions), so the loader reads it as a one-byte string: one character
 * beyond Latin-1 would double the memory V8 holds for the whole source.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const esbuild = require('esbuild');

const ROOT = path.join(__dirname, '..');
const OUT_DIR = path.join(ROOT, 'dist', 'bundle');
const OUT = path.join(OUT_DIR, 'server.js');

const EXTERNAL = [
  'better-sqlite3', 'pg-native', 'mysql', 'mysql2', 'oracledb', 'tedious', 'sqlite3', 'pg-query-stream', 'mariadb',
  'swagger-ui-dist', 'htmx.org', 'country-state-city',
  'iconv-lite',
  'mailparser', 'html-to-text', 'smtp-server', 'imapflow',
];

/** `\uXXXX` for every UTF-16 unit beyond ASCII: the same value in a string, a template or a regular expression. */
function asciiOnly(code) {
  return code.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * pg asks at load whether it runs in a Cloudflare Worker; on node 20 (no `navigator`) it does so
 * by constructing a `Response`, and touching that global loads node's fetch (undici): ~27 ms of
 * every start on PostgreSQL. The bundle only runs on node, so the question is answered at
 * build. The build fails if pg's file no longer reads as expected, rather than silently keeping the cost.
 */
const nodeOnlyPg = {
  name: 'pg-node-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/ }, (args) => {
      const source = fs.readFileSync(args.path, 'utf8');
      const asked = 'if (isCloudflareRuntime()) {';
      if (!source.includes(asked)) throw new Error(`${args.path} no longer asks isCloudflareRuntime() as scripts/bundle.js expects`);
      return { contents: source.replace(asked, 'if (false) {'), loader: 'js' };
    });
  },
};

async function main() {
  const result = await esbuild.build({
    plugins: [nodeOnlyPg],
    entryPoints: [path.join(ROOT, 'dist', 'src', 'server.js')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: EXTERNAL,
    // No comments or indentation (a third smaller to read and hold); names stay, so stack traces keep them.
    minifyWhitespace: true,
    charset: 'ascii',
    write: false,
    logLevel: 'error',
  });
  const code = asciiOnly(result.outputFiles[0].text);
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const previous = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'latin1') : undefined;
  if (previous === code) return;
  // V8 checks a code cache against the source's length only: a new bundle drops every old cache.
  for (const name of fs.readdirSync(OUT_DIR)) if (name.endsWith('.cache')) fs.rmSync(path.join(OUT_DIR, name));
  const temporary = `${OUT}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, code, 'latin1');
  fs.renameSync(temporary, OUT);
}

main().catch((err) => {
  process.stderr.write(`Bundling the server failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
