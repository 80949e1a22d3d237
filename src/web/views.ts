import nunjucks from 'nunjucks';
import { VIEWS_DIR } from '../lib/paths';

/** The one nunjucks environment of the server-rendered pages (autoescape on). */
export function createViews(): nunjucks.Environment {
  return new nunjucks.Environment(new nunjucks.FileSystemLoader(VIEWS_DIR), { autoescape: true });
}
