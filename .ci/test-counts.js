// Prints what each test run of .ci/run executed, from jest's --json reports in the folder given:
// compare the counts with the previous CI run's to see that no test was dropped.
const fs = require('node:fs');
const path = require('node:path');
const { ONCE_ON_SQLITE } = require('../test/support/once-on-sqlite');

const dir = process.argv[2];
const reports = ['SQLite', 'PostgreSQL']
  .map((name) => ({ name, file: path.join(dir, `${name}.json`) }))
  .filter(({ file }) => fs.existsSync(file));

console.log('== tests executed');
if (reports.length === 0) console.log('no test run finished');
for (const { name, file } of reports) {
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  const ended = Math.max(r.startTime, ...r.testResults.map((t) => t.endTime || 0));
  const seconds = Math.round((ended - r.startTime) / 1000);
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(
    `${`${name}:`.padEnd(12)}${r.numTotalTests} tests in ${r.numTotalTestSuites} files, ${r.numPassedTests} passed, ` +
      `${r.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}${r.numRuntimeErrorTestSuites ? `, ${r.numRuntimeErrorTestSuites} files did not run` : ''} (${seconds} s)`,
  );
}
if (reports.some(({ name }) => name === 'PostgreSQL')) {
  console.log(`(PostgreSQL leaves out the ${ONCE_ON_SQLITE.length} entries of test/support/once-on-sqlite.js, run on SQLite only)`);
}
