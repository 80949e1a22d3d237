import fs from 'node:fs';
import path from 'node:path';

function findRoot(start: string): string {
  let dir = start;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${start}`);
    dir = parent;
  }
  return dir;
}

/** The project folder (holding package.json, views/, public/, seeds/), from sources or from dist/. */
export const PROJECT_ROOT = findRoot(__dirname);
export const PUBLIC_DIR = path.join(PROJECT_ROOT, 'public');
export const VIEWS_DIR = path.join(PROJECT_ROOT, 'views');

/** The reference's {base_url} is BASE_URL plus this prefix. */
export const API_PREFIX = '/api/v1';
