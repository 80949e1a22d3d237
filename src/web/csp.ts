/**
 * The dashboard's Content-Security-Policy directives: nothing inline, nothing from elsewhere.
 * Scripts are public/assets/*.js, htmx and (on the editor pages) GrapesJS, all from this origin.
 */
export function dashboardDirectives(https: boolean) {
  return {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:'],
    fontSrc: ["'self'"],
    connectSrc: ["'self'"],
    frameSrc: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
    objectSrc: ["'none'"],
    ...(https ? { upgradeInsecureRequests: [] } : {}),
  };
}
