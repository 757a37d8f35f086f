// The AsyncAPI document beside the OpenAPI one: /asyncapi.json, /asyncapi.yaml, and /docs/asyncapi, a
// page made on the server (no script): a table of contents, each channel with its description rendered
// from Markdown (marked), its operations, messages, refusals and close codes, then the payloads and
// schemas as JSON, folded. Nothing on it is wider than a phone's screen.
import express from 'express';
import { Marked } from 'marked';
import type { AppContext } from '../http/context.js';
import { servedAsyncApi } from '../http/asyncapi.js';
import { pageSecurity } from '../http/securityHeaders.js';
import { escapeHtml, htmlDocument } from './html.js';

type Json = Record<string, any>;

// The document is ours, yet any HTML written into its Markdown is shown as text, never as markup.
const markdown = new Marked({ gfm: true, renderer: { html: ({ text }) => escapeHtml(text) } });
// Code and tables wider than the screen scroll inside their box, which the keyboard can reach too.
const scrollable = (html: string) => html.replaceAll('<pre>', '<pre tabindex="0">');
const block = (value: unknown) => (value ? scrollable(markdown.parse(String(value), { async: false })) : '');
const inline = (value: unknown) => (value ? markdown.parseInline(String(value), { async: false }) : '');

const code = (value: unknown) => `<code>${escapeHtml(String(value))}</code>`;
const json = (value: unknown) => `<pre tabindex="0"><code>${escapeHtml(JSON.stringify(value, null, 2))}</code></pre>`;
const lastPart = (ref: string) => ref.split('/').pop()!;
const anchor = (kind: string, id: string) => `${kind}-${id.replace(/[^A-Za-z0-9_-]/g, '-')}`;

function table(rows: Json[] | undefined, columns: string[]): string {
  if (!rows?.length) return '';
  const head = columns.map((column) => `<th scope="col">${escapeHtml(column)}</th>`).join('');
  const body = rows.map((row) => `<tr>${columns.map((column) => `<td>${inline(row[column] ?? '')}</td>`).join('')}</tr>`).join('');
  return `<div class="table-scroll" tabindex="0"><table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

function renderPage(document: Json): string {
  const messages: Json = document.components.messages;
  const channelIds = Object.keys(document.channels);
  const channels = Object.entries<Json>(document.channels).map(([id, channel]) => {
    const operations = Object.entries<Json>(document.operations)
      .filter(([, operation]) => lastPart(operation.channel.$ref) === id)
      .map(([name, operation]) => `<li>${code(operation.action)} ${code(name)}: ${inline(operation.summary ?? '')}</li>`)
      .join('');
    const listed = Object.entries<Json>(channel.messages ?? {})
      .map(([key, ref]) => {
        const messageId = lastPart(ref.$ref);
        const message = messages[messageId];
        const kind = message['x-audiosocket-kind'];
        return `<li><a href="#${anchor('message', messageId)}">${code(message.name ?? key)}</a>${kind === undefined ? '' : ` (kind 0x${kind.toString(16).padStart(2, '0')})`}: ${inline(message.summary ?? message.title ?? '')}</li>`;
      })
      .join('');
    return `<section id="${anchor('channel', id)}">
<h2>${escapeHtml(channel.title ?? id)} ${code(channel.address ?? '(TCP connection)')}</h2>
${block(channel.description ?? '')}
<h3>Operations</h3><ul>${operations}</ul>
<h3>Messages</h3><ul>${listed}</ul>
${channel['x-refusals'] ? `<h3>Refused before the upgrade</h3>${table(channel['x-refusals'], ['status', 'detail'])}` : ''}
${channel['x-close-codes'] ? `<h3>Close codes</h3>${table(channel['x-close-codes'], ['code', 'reason', 'description'])}` : ''}
</section>`;
  });
  const payloads = Object.entries<Json>(messages)
    .map(([id, message]) => `<section id="${anchor('message', id)}"><h3>${escapeHtml(id)}</h3>${block(message.summary)}<details><summary>Payload</summary>${json(message.payload)}</details>${
      message['x-audiosocket-codes'] ? table(message['x-audiosocket-codes'], ['code', 'meaning']) : ''
    }</section>`)
    .join('\n');
  const schemas = Object.entries<Json>(document.components.schemas ?? {})
    .map(([id, schema]) => `<details id="${anchor('schema', id)}"><summary>${escapeHtml(id)}</summary>${json(schema)}</details>`)
    .join('\n');
  const contents = channelIds
    .map((id) => `<li><a href="#${anchor('channel', id)}">${escapeHtml(document.channels[id].title ?? id)}</a></li>`)
    .join('');
  return htmlDocument({
    title: `${document.info.title}`,
    stylesheets: ['/docs/reference/asyncapi.css'],
    body: `<main class="page">
<h1>${escapeHtml(document.info.title)}</h1>
<p class="muted">AsyncAPI ${escapeHtml(document.asyncapi)}: <a href="/asyncapi.json">/asyncapi.json</a>, <a href="/asyncapi.yaml">/asyncapi.yaml</a>. REST operations and the event schemas: <a href="/docs">/docs</a>.</p>
<nav class="toc" aria-labelledby="contents"><h2 id="contents">Contents</h2><ol>
<li><a href="#overview">Overview</a></li>
${contents}
<li><a href="#payloads">Message payloads</a></li>
<li><a href="#schemas">Schemas</a></li>
</ol></nav>
<section id="overview"><h2>Overview</h2>${block(document.info.description)}</section>
${channels.join('\n')}
<section id="payloads"><h2>Message payloads</h2>
${payloads}</section>
<section id="schemas"><h2>Schemas</h2>
${schemas}</section>
</main>`,
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
