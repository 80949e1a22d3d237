import { spawnSync } from 'node:child_process';
import path from 'node:path';

/** scripts/find-chromium.sh runs before `npm test` (the pretest script). */
describe('the pretest step that finds Chromium', () => {
  const script = path.join(__dirname, '../../scripts/find-chromium.sh');
  const run = (chromiumPath: string) =>
    spawnSync('bash', [script], { env: { ...process.env, CHROMIUM_PATH: chromiumPath }, encoding: 'utf8' });

  test('when Chromium is missing then it stops at once with one line saying what to install', () => {
    const result = run('/nonexistent/chromium');
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'pretest: no Chromium at /nonexistent/chromium: install Debian\'s package (sudo apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary.\n',
    );
  });

  test('when Chromium is where CHROMIUM_PATH says then it passes quietly', () => {
    const result = run(process.execPath);
    expect(result.status).toBe(0);
    expect(result.stdout + result.stderr).toBe('');
  });

  test('when npm test runs then the pretest step runs first', () => {
    const scripts = require('../../package.json').scripts as Record<string, string>;
    expect(scripts.pretest).toBe('bash scripts/find-chromium.sh');
  });
});
