import { readFileSync } from 'node:fs';
import type { Frame, Page } from 'playwright-core';

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

/**
 * The same inside a frame of the page (the visual editor's canvas), which axe on the page does
 * not enter. The rules about a whole page's outline (one main landmark, a level-one heading,
 * everything inside landmarks) are the page's, which has them (the frame sits in its main): a
 * part of it shown in a frame is not asked for them again.
 */
export async function axeFrameViolations(frame: Frame): Promise<string[]> {
  if (!(await frame.evaluate('typeof window.axe === "object"'))) await frame.evaluate(AXE_SOURCE);
  const options = '{ resultTypes: ["violations"], rules: { "landmark-one-main": { enabled: false }, "page-has-heading-one": { enabled: false }, region: { enabled: false } } }';
  const result = (await frame.evaluate(`window.axe.run(document, ${options})`)) as AxeResult;
  return result.violations.map((v) => `frame ${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
