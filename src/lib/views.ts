import type nunjucks from 'nunjucks';
import { lazy } from './lazy';
import { VIEWS_DIR } from './paths';

/**
 * A nunjucks environment over views/, autoescaping everything it renders (the one place the
 * loader and escaping are configured; the dashboard adds whitespace trimming and its filters).
 */
/** nunjucks loads with the first environment built: a worker that sends no verification mail never needs it. */
const engine = lazy(() => require('nunjucks') as typeof nunjucks);

export function createViews(options: Pick<nunjucks.ConfigureOptions, 'trimBlocks' | 'lstripBlocks'> = {}): nunjucks.Environment {
  const { Environment, FileSystemLoader } = engine();
  return new Environment(new FileSystemLoader(VIEWS_DIR), { ...options, autoescape: true });
}
