import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';

/** axe-core's browser build, evaluated in the page (DevTools evaluation is outside the page's CSP). */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeResult {
  violations: Array<{ id: string; help: string; nodes: Array<{ target: string[] }> }>;
}

/** The axe rules that fail on the page as it is now, one line each ("path rule (help): selectors"). */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const result = (await page.evaluate('window.axe.run(document, { resultTypes: ["violations"] })')) as AxeResult;
  return result.violations.map((v) => `${page.url().replace(/^https?:\/\/[^/]+/, '')} ${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
