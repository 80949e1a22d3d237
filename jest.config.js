const os = require('node:os');

const { ONCE_ON_SQLITE } = require('./test/support/once-on-sqlite');

/**
 * Most of a test's time is spent waiting on the database, the SMTP sinks, Chromium and child
 * processes, not on the CPU, so one worker more than the cores keeps both cores busy. On the
 * 2-core machine, a sample of 19 files (92 tests: API, dashboard, mail, browser, unit) took
 * 237 s with 2 workers, 222 s with 3 and 244 s with 4. JEST_WORKERS=n overrides.
 */
const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
const workers = Number(process.env.JEST_WORKERS) || cores + 1;

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', ...(process.env.CI_DB_PASS === 'postgres' ? ONCE_ON_SQLITE.map((p) => `<rootDir>/${escape(p)}`) : [])],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
    // openid-client, otplib's crypto helpers and the libraries under them ship only ES modules, which jest 29 cannot load.
    '/node_modules/(openid-client|oauth4webapi|jose|@scure|@noble)/.+\\.js$': [
      '@swc/jest',
      { jsc: { target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(openid-client|oauth4webapi|jose|@scure|@noble|otplib|@otplib)/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  maxWorkers: workers,
  testTimeout: 30000,
};
