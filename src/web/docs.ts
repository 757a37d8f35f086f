// A readable API reference at /docs, rendered by Swagger UI from /openapi.json with its assets served
// from the installed package: no CDN, so it works offline. How it is set up for trying the API out:
// reference/init.js.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { contractCopy, contractYaml } from '../http/contract.js';
import { pageSecurity } from '../http/securityHeaders.js';

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Live-Interpretation and Support-Chat API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="stylesheet" href="/docs/reference/reference.css">
</head>
<body>
  <nav class="reference-nav" aria-label="Documents"><a href="/docs/asyncapi">Sockets and event streams (AsyncAPI)</a> <a href="/openapi.json">/openapi.json</a> <a href="/openapi.yaml">/openapi.yaml</a> <a href="/asyncapi.json">/asyncapi.json</a></nav>
  <main id="reference"></main>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/reference/init.js"></script>
</body>
</html>`;

// Only the package's folder: importing swagger-ui-dist itself would load its browser bundles into the
// server (about 40 MiB) just to tell where they are.
const swaggerUiAssets = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const reference = path.join(path.dirname(fileURLToPath(import.meta.url)), 'reference');

/** The contract as this server serves it: its `servers` name this server (PUBLIC_BASE_URL), so a
 * client generated from or pointed at the served document reaches it, not the file's localhost default. */
const servers = (publicBaseUrl: string) => [{ url: publicBaseUrl, description: 'This server' }];

/** The YAML text with `servers` replaced, comments and layout kept; made on first request (the YAML
 * parser is not needed to start the server: the compiled build ships the document as JSON too). */
async function servedYaml(publicBaseUrl: string): Promise<string> {
  const YAML = (await import('yaml')).default;
  const document = YAML.parseDocument(contractYaml);
  document.set('servers', servers(publicBaseUrl));
  return document.toString({ lineWidth: 0 });
}

export function docsRouter(publicBaseUrl: string): express.Router {
  const router = express.Router();
  const json = JSON.stringify({ ...contractCopy(), servers: servers(publicBaseUrl) });
  let yaml: Promise<string> | undefined;
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(json);
  });
  router.get('/openapi.yaml', async (_req, res) => {
    res.type('application/yaml').send(await (yaml ??= servedYaml(publicBaseUrl)));
  });
  router.get('/docs', pageSecurity('self'), (_req, res) => {
    res.type('html').send(page);
  });
  router.use('/docs/reference', express.static(reference, { index: false, maxAge: '5m' }));
  router.use('/docs/assets', express.static(swaggerUiAssets, { index: false, maxAge: '1h' }));
  return router;
}
