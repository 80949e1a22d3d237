import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import express,{ RequestHandler } from 'express';
import { PUBLIC_DIR } from '../lib/paths';

/**
 * The dashboard's own CSS and JS come from public/ (served by the app's static route);
 * htmx, and on the two editor pages GrapesJS with its newsletter preset, are served from their
 * npm packages (never a CDN). Every URL carries a version, so the browser may
 * cache them for long and still picks up a new release at once.
 */
const HTMX_DIST = path.dirname(require.resolve('htmx.org/dist/htmx.min.js'));
const HTMX_VERSION: string = JSON.parse(fs.readFileSync(path.join(HTMX_DIST, '..', 'package.json'), 'utf8')).version;
const HTMX_PREFIX = `/vendor/htmx-${HTMX_VERSION}`;

/** A package's dist folder, served under a prefix carrying its version. */
function packageDist(name: string, file: string): { dir: string; prefix: string } {
  const dir = path.dirname(require.resolve(`${name}/${file}`));
  const version: string = JSON.parse(fs.readFileSync(path.join(dir, '..', 'package.json'), 'utf8')).version;
  return { dir, prefix: `/vendor/${name}-${version}` };
}
const GRAPES = packageDist('grapesjs', 'dist/grapes.min.js');
const NEWSLETTER = packageDist('grapesjs-preset-newsletter', 'dist/index.js');

function versioned(file: string): string {
  const hash = crypto.createHash('sha256').update(fs.readFileSync(path.join(PUBLIC_DIR, file))).digest('hex').slice(0, 12);
  return `/${file}?v=${hash}`;
}

export const assetUrls = {
  htmx: `${HTMX_PREFIX}/htmx.min.js`,
  css: versioned('assets/app.css'),
  js: versioned('assets/app.js'),
  apiDocsCss: versioned('assets/api-docs.css'),
  apiDocsJs: versioned('assets/api-docs.js'),
  /** Loaded only by the composer and the automation step page (views/editor/assets.njk). */
  editor: {
    css: `${GRAPES.prefix}/css/grapes.min.css`,
    grapes: `${GRAPES.prefix}/grapes.min.js`,
    newsletter: `${NEWSLETTER.prefix}/index.js`,
    boot: versioned('assets/editor.js'),
  },
};

export function vendorAssets(): RequestHandler[] {
  const options = { maxAge: '365d', immutable: true, index: false } as const;
  const router = express.Router();
  router.use(HTMX_PREFIX, express.static(HTMX_DIST, options));
  router.use(GRAPES.prefix, express.static(GRAPES.dir, options));
  router.use(NEWSLETTER.prefix, express.static(NEWSLETTER.dir, options));
  return [router];
}
