import fs from 'node:fs';
import path from 'node:path';
import express, { RequestHandler, Router } from 'express';
import { API_PREFIX } from '../lib/paths';
import { assetUrls } from './assets';

/**
 * /docs: a readable reference of the API, Swagger UI (swagger-ui-dist, served from its npm
 * package, never a CDN) over GET /api/v1/openapi.json. Its initializer is a file
 * (public/assets/api-docs.js); the page has its own Content-Security-Policy, as strict as the
 * dashboard's: scripts, styles and fetches from this origin only, images also as data: URIs
 * (Swagger UI's stylesheet draws its icons so).
 */
const DIST = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const VERSION: string = JSON.parse(fs.readFileSync(path.join(DIST, 'package.json'), 'utf8')).version;
const PREFIX = `/vendor/swagger-ui-${VERSION}`;
/** The files the page loads; the package's demo page (pointing at a petstore elsewhere) is not served. */
const FILES = new Set(['swagger-ui-bundle.js', 'swagger-ui.css']);

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Campaigns</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${PREFIX}/swagger-ui.css">
<link rel="stylesheet" href="${assetUrls.apiDocsCss}">
<script src="${PREFIX}/swagger-ui-bundle.js" defer></script>
<script src="${assetUrls.apiDocsJs}" defer></script>
</head>
<body>
<header class="api-docs-header"><p class="api-docs-name">Campaigns API reference</p><a href="${API_PREFIX}/openapi.json">OpenAPI document (JSON)</a><a href="/">Dashboard</a></header>
<div id="swagger-ui" data-spec="${API_PREFIX}/openapi.json"><noscript>This page needs JavaScript; the <a href="${API_PREFIX}/openapi.json">OpenAPI document</a> is plain JSON.</noscript></div>
</body>
</html>
`;

export function apiDocsRouter(): Router {
  const router = express.Router();
  const vendor = express.static(DIST, { maxAge: '365d', immutable: true, index: false });
  const onlyTheFiles: RequestHandler = (req, res, next) => (FILES.has(req.path.slice(1)) ? vendor(req, res, next) : next());
  router.use(PREFIX, onlyTheFiles);
  router.get('/docs', (_req, res) => {
    res.set({ 'Content-Security-Policy': CSP, 'Cache-Control': 'no-cache' });
    res.type('html').send(PAGE);
  });
  return router;
}
