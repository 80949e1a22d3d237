/* The API reference page (/docs): Swagger UI over the service's own OpenAPI document. */

// Swagger UI's headings start at its title's h1 and go on at h3 (each resource) and h4 (an
// operation's parts), skipping a level. They are read one level higher (h3 as 2, h4 as 3…),
// on every heading Swagger UI renders, now or later (a resource opened, a filter typed).
function levelHeadings(root) {
  root.querySelectorAll('h3, h4, h5, h6').forEach(function (heading) {
    var level = String(Number(heading.tagName.charAt(1)) - 1);
    if (heading.getAttribute('aria-level') !== level) heading.setAttribute('aria-level', level);
  });
}

// Swagger UI puts its operations in a <main> and the rest (the API's description, the server
// and key pickers, the filter) in plain boxes outside any landmark: each gets its own, so a
// screen reader's landmark list reaches all of the page.
var LANDMARKS = [
  ['.information-container', 'region', 'About this API'],
  ['.scheme-container', 'region', 'Server and keys'],
  ['.filter-container', 'search', 'Filter the operations'],
];
function markLandmarks(root) {
  LANDMARKS.forEach(function (landmark) {
    var box = root.querySelector(landmark[0]);
    if (!box || box.getAttribute('role') === landmark[1]) return;
    box.setAttribute('role', landmark[1]);
    box.setAttribute('aria-label', landmark[2]);
  });
}

window.addEventListener('DOMContentLoaded', function () {
  var root = document.getElementById('swagger-ui');
  new MutationObserver(function () {
    levelHeadings(root);
    markLandmarks(root);
  }).observe(root, { childList: true, subtree: true });
  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-spec'),
    domNode: root,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    // Deep links make each operation's path a link inside the button that opens it (a control
    // inside a control, which a screen reader cannot operate); without them the path is text.
    deepLinking: false,
    // Never ask validator.swagger.io for a badge: nothing leaves the page's own origin.
    validatorUrl: null,
    defaultModelsExpandDepth: 0,
    docExpansion: 'list',
    filter: true,
    // Swagger UI's server picker has a visible heading but no label of its own.
    onComplete: function () {
      var servers = document.getElementById('servers');
      if (servers) servers.setAttribute('aria-label', 'Server');
    },
  });
});
