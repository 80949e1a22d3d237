/**
 * Files that CI runs once, on its SQLite pass, and leaves out of its PostgreSQL pass
 * (`.ci/run` sets CI_DB_PASS=postgres for that one): what they check does not depend on the
 * database, so a second run would only repeat it. Anything not listed runs on both; a file whose
 * point is PostgreSQL stays off this list even when it is slow (the crash and worker-process tests
 * run two workers on one send only on PostgreSQL, so they stay). Run by hand, with or without
 * DATABASE_URL, every file runs. test/unit/once-on-sqlite.test.ts checks that each entry names a
 * file or folder that exists.
 */
const ONCE_ON_SQLITE = [
  // The browser journeys: the pages, their scripts and CSP are the same whatever the database.
  'test/e2e/',
  // Pure functions and source checks: no database at all.
  'test/lib/',
  'test/unit/automated-opens.test.ts',
  'test/unit/bounce-reader.test.ts',
  'test/unit/config.test.ts',
  'test/unit/find-chromium.test.ts',
  'test/unit/layers.test.ts',
  'test/unit/library-internals.test.ts',
  'test/unit/map.test.ts',
  'test/unit/once-on-sqlite.test.ts',
  'test/unit/plain-messages.test.ts',
  'test/unit/public-address.test.ts',
  'test/unit/relay-failures.test.ts',
  'test/unit/request-log.test.ts',
  'test/unit/send-decision.test.ts',
  'test/unit/sign-in-config.test.ts',
  'test/unit/view-permissions.test.ts',
  'test/unit/view-statuses.test.ts',
  // The route walk reads the route tables; the database only boots the app.
  'test/unit/log-redaction.test.ts',
  // SQLite's own settings and files: they open a SQLite file whatever DATABASE_URL says.
  'test/unit/sqlite-settings.test.ts',
  'test/unit/sqlite-shrink.test.ts',
  'test/unit/sqlite-statements.test.ts',
  // Processes started and stopped (signals, the first start, the build): the process's life, not the database's.
  'test/start/built-server.test.ts',
  'test/start/stop-under-load.test.ts',
  'test/cli/start-and-cli.test.ts',
];

module.exports = { ONCE_ON_SQLITE };
