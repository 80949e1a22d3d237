import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import express,{ RequestHandler } from 'express';
import { PUBLIC_DIR } from '../lib/paths';

/**
 * The dashboard's own CSS and JS come from public/ (served by the app's static route);
 * htmx is served from its npm package. Every URL carries a version, so the browser may
 * cache them for long and still picks up a new release at once.
 */
const HTMX_DIST = path.dirname(require.resolve('htmx.org/dist/htmx.min.js'));
const HTMX_VERSION: string = JSON.parse(fs.readFileSync(path.join(HTMX_DIST, '..', 'package.json'), 'utf8')).version;
const HTMX_PREFIX = `/vendor/htmx-${HTMX_VERSION}`;

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
};

export function vendorAssets(): [string, RequestHandler] {
  return [HTMX_PREFIX, express.static(HTMX_DIST, { maxAge: '365d', immutable: true, index: false })];
}
