import nunjucks from 'nunjucks';
import { VIEWS_DIR } from './paths';

/**
 * A nunjucks environment over views/, autoescaping everything it renders (the one place the
 * loader and escaping are configured; the dashboard adds whitespace trimming and its filters).
 */
export function createViews(options: Pick<nunjucks.ConfigureOptions, 'trimBlocks' | 'lstripBlocks'> = {}): nunjucks.Environment {
  return new nunjucks.Environment(new nunjucks.FileSystemLoader(VIEWS_DIR), { ...options, autoescape: true });
}
