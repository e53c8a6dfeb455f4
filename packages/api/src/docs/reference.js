// Starts Swagger UI (served from /docs/assets, nothing from elsewhere) on /openapi.json.
// A file rather than an inline script, so that a strict Content-Security-Policy allows it.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
  deepLinking: true,
  displayOperationId: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 1,
  defaultModelExpandDepth: 3,
  showExtensions: true,
  showCommonExtensions: true,
  // No badge from the public validator: the page asks nothing of any other server.
  validatorUrl: null,
});
