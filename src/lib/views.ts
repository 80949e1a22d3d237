import nunjucks from 'nunjucks';
import { VIEWS_DIR } from './paths';

/** A nunjucks environment over views/, autoescaping everything it renders. */
export function createViews(): nunjucks.Environment {
  return new nunjucks.Environment(new nunjucks.FileSystemLoader(VIEWS_DIR), { autoescape: true });
}
