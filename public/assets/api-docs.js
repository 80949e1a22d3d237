/* The API reference page (/docs): Swagger UI over the service's own OpenAPI document. */
window.addEventListener('DOMContentLoaded', function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-spec'),
    domNode: root,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    deepLinking: true,
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
