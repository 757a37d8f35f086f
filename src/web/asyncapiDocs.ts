// The AsyncAPI document beside the OpenAPI one: /asyncapi.json, /asyncapi.yaml, and /docs/asyncapi, a
// plain rendering (channels, operations, messages with their payloads, close codes) made on the server:
// no renderer package, no script.
import express from 'express';
import type { AppContext } from '../http/context.js';
import { servedAsyncApi } from '../http/asyncapi.js';
import { pageSecurity } from '../http/securityHeaders.js';
import { escapeHtml, htmlDocument } from './html.js';

type Json = Record<string, any>;

const code = (value: unknown) => `<code>${escapeHtml(String(value))}</code>`;
const text = (value: unknown) => (value ? `<p>${escapeHtml(String(value))}</p>` : '');
const pre = (value: unknown) => `<pre>${escapeHtml(typeof value === 'string' ? value : JSON.stringify(value, null, 2))}</pre>`;
const lastPart = (ref: string) => ref.split('/').pop()!;

function table(rows: Json[] | undefined, columns: string[]): string {
  if (!rows?.length) return '';
  const head = columns.map((column) => `<th>${escapeHtml(column)}</th>`).join('');
  const body = rows.map((row) => `<tr>${columns.map((column) => `<td>${escapeHtml(String(row[column] ?? ''))}</td>`).join('')}</tr>`).join('');
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

function renderPage(document: Json): string {
  const messages: Json = document.components.messages;
  const channels = Object.entries<Json>(document.channels).map(([id, channel]) => {
    const operations = Object.entries<Json>(document.operations)
      .filter(([, operation]) => lastPart(operation.channel.$ref) === id)
      .map(([name, operation]) => `<li>${code(operation.action)} ${code(name)}: ${escapeHtml(operation.summary ?? '')}</li>`)
      .join('');
    const listed = Object.entries<Json>(channel.messages ?? {})
      .map(([key, ref]) => {
        const message = messages[lastPart(ref.$ref)];
        const kind = message['x-audiosocket-kind'];
        return `<li>${code(message.name ?? key)}${kind === undefined ? '' : ` (kind 0x${kind.toString(16).padStart(2, '0')})`}: ${escapeHtml(message.summary ?? message.title ?? '')}</li>`;
      })
      .join('');
    return `<section id="${escapeHtml(id)}">
<h2>${escapeHtml(channel.title ?? id)} ${code(channel.address ?? '(TCP connection)')}</h2>
${pre(channel.description ?? '')}
<h3>Operations</h3><ul>${operations}</ul>
<h3>Messages</h3><ul>${listed}</ul>
${channel['x-refusals'] ? `<h3>Refused before the upgrade</h3>${table(channel['x-refusals'], ['status', 'detail'])}` : ''}
${channel['x-close-codes'] ? `<h3>Close codes</h3>${table(channel['x-close-codes'], ['code', 'reason', 'description'])}` : ''}
</section>`;
  });
  const payloads = Object.entries<Json>(messages)
    .map(([id, message]) => `<section id="message-${escapeHtml(id)}"><h3>${escapeHtml(id)}</h3>${text(message.summary)}${pre(message.payload)}${
      message['x-audiosocket-codes'] ? table(message['x-audiosocket-codes'], ['code', 'meaning']) : ''
    }</section>`)
    .join('\n');
  return htmlDocument({
    title: `${document.info.title}`,
    stylesheets: [],
    body: `<h1>${escapeHtml(document.info.title)}</h1>
<p>AsyncAPI ${escapeHtml(document.asyncapi)}: <a href="/asyncapi.json">/asyncapi.json</a>, <a href="/asyncapi.yaml">/asyncapi.yaml</a>. REST operations and the event schemas: <a href="/docs">/docs</a>.</p>
${pre(document.info.description)}
${channels.join('\n')}
<h2>Message payloads</h2>
${payloads}
<h2>Schemas</h2>
${pre(document.components.schemas)}`,
  });
}

export function asyncApiRouter(app: Pick<AppContext, 'config' | 'audioSocketPort'>): express.Router {
  // Made on first request: the AudioSocket port is known only once its server listens, and the YAML
  // parser is not needed to start the server.
  let served: Promise<{ json: string; yaml: string; page: string }> | undefined;
  const build = async () => {
    const built = await servedAsyncApi({ publicBaseUrl: app.config.publicBaseUrl, audioSocketHost: app.config.audioSocketHost, audioSocketPort: app.audioSocketPort });
    const YAML = (await import('yaml')).default;
    return { json: JSON.stringify(built), yaml: YAML.stringify(built), page: renderPage(built) };
  };
  const document = () => (served ??= build());
  const router = express.Router();
  router.get('/asyncapi.json', async (_req, res) => {
    res.type('application/json').send((await document()).json);
  });
  router.get('/asyncapi.yaml', async (_req, res) => {
    res.type('application/yaml').send((await document()).yaml);
  });
  router.get('/docs/asyncapi', pageSecurity('self'), async (_req, res) => {
    res.type('html').send((await document()).page);
  });
  return router;
}
