import type { FastifyInstance } from 'fastify';
import swaggerUi from '@fastify/swagger-ui';
import { installErrorsPage } from './errors-page.js';

/** Where the API reference (Swagger UI) is served. */
export const API_REFERENCE_PREFIX = '/docs';

/**
 * The service's own mark on the reference page instead of the framework's, as the plugin's logo and
 * favicon options give it (its script, served from 'self', swaps the logo in: the page's CSP allows no
 * inline script). The stylesheet hides Swagger UI's own logo, which would show until the swap.
 */
const THEME_CSS = `.swagger-ui .topbar .topbar-wrapper .link svg { display: none; }
`;
const MARK_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f4e79"/><text x="16" y="21" font-family="sans-serif" font-size="13" font-weight="700" fill="#fff" text-anchor="middle">WO</text></svg>`;

/**
 * Serves the API reference at /docs, with the page of error codes at /docs/errors (errors-page.ts):
 * Swagger UI over the document `openApiPath` serves. The plugin
 * always points the page at its own copy (`/docs/json`) and ignores a `url` given in uiConfig; a
 * `configUrl` is read after that, so the page loads, and its explore field shows, the path clients
 * use (`/api/v1/openapi.json`).
 */
export async function installApiReference(app: FastifyInstance, openApiPath: string): Promise<void> {
  const configPath = `${API_REFERENCE_PREFIX}/swagger-config.json`;
  await app.register(swaggerUi, {
    routePrefix: API_REFERENCE_PREFIX,
    staticCSP: true,
    // Swagger UI injects <style> elements and style attributes as it renders: allow inline styles on
    // this page (scripts stay 'self' only), or the browser logs a refusal for each one. And no
    // `upgrade-insecure-requests`: served over plain http on any host but loopback, it made the browser
    // fetch the page's own scripts over https, which fails, and the page stayed blank.
    transformStaticCSP: (header) =>
      header
        .replace(/style-src ([^;]*);/, (_match, sources: string) => `style-src ${sources.trim()} 'unsafe-inline';`)
        .replace(/\s*upgrade-insecure-requests;?/, ''),
    uiConfig: { configUrl: configPath } as never,
    logo: { type: 'image/svg+xml', content: MARK_SVG, href: API_REFERENCE_PREFIX },
    theme: {
      title: 'Work-order API reference',
      css: [{ filename: 'work-orders.css', content: THEME_CSS }],
      favicon: [{ filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: MARK_SVG }],
    },
  });
  app.get(configPath, { schema: { hide: true } }, async () => ({ url: openApiPath }));
  installErrorsPage(app);
}
