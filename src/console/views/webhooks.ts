// Webhooks: the endpoints of the mode in view, newest first, each with its state and why, its actions
// (disable or enable, rotate the secret, delete after a confirmation) and its newest deliveries (each
// can be sent again); a form to add one; a new or rotated signing secret shown once with a copy button.
import type { DeliveryOut } from '../../webhooks/deliveries.js';
import type { WebhookEndpointOut } from '../../webhooks/endpoints.js';
import { RETRY_FOR_MS } from '../../webhooks/worker.js';
import { escapeHtml } from '../../web/html.js';
import { confirmForm, consolePage, csrfField, table, timeOf, type ConsoleView } from '../layout.js';
import { hasRole } from '../session.js';
import { BLANK_FORM, DESCRIPTION_MAX_LENGTH, EVENT_TYPES, URL_MAX_LENGTH, type EndpointForm } from '../webhookForm.js';

/** The deliveries shown per endpoint, newest first. */
export const RECENT_DELIVERIES = 10;

export interface EndpointView {
  endpoint: WebhookEndpointOut;
  deliveries: DeliveryOut[];
}

export interface WebhooksOutcome {
  /** An endpoint just made or whose secret was just rotated, with the secret to show this once. */
  secret?: { endpoint: WebhookEndpointOut; secret: string; rotated: boolean };
  /** A refused form: why, and the form as it was sent. */
  refused?: { message: string; form: EndpointForm };
}

const RETRY_DAYS = RETRY_FOR_MS / (24 * 3600_000);

/** Each console form of this page says which mode's endpoint it acts on: the one the page showed. */
const formFields = (view: ConsoleView) => `${csrfField(view.member)}<input type="hidden" name="mode" value="${view.mode}">`;

const button = (view: ConsoleView, action: string, label: string, name: string, className = 'secondary') =>
  `<form class="inline" method="post" action="${action}">${formFields(view)}<button type="submit"${className ? ` class="${className}"` : ''} aria-label="${escapeHtml(name)}">${label}</button></form>`;

const stateOf = (endpoint: WebhookEndpointOut) => {
  if (!endpoint.disabled) return '<span class="status open">Enabled</span>';
  const why =
    endpoint.disabled_reason === 'failing'
      ? `its deliveries failed for ${RETRY_DAYS} days`
      : 'by a member or an API key';
  return `<strong>Disabled</strong> ${timeOf(endpoint.disabled_at)}: ${why}`;
};

const lastAnswer = (delivery: DeliveryOut) => {
  const last = delivery.attempts.at(-1);
  if (!last) return '<span class="muted">not tried yet</span>';
  return last.status_code !== null ? `HTTP ${last.status_code}` : escapeHtml(last.error ?? 'no answer');
};

function deliveriesTable(view: ConsoleView, { endpoint, deliveries }: EndpointView): string {
  const base = `/console/webhooks/${encodeURIComponent(endpoint.id)}`;
  const rows = deliveries.map((delivery) => [
    `<code>${escapeHtml(delivery.event_type)}</code><br>${timeOf(delivery.created_at)}`,
    `<span class="delivery ${delivery.status}">${delivery.status}</span>`,
    String(delivery.attempts.length),
    lastAnswer(delivery),
    delivery.next_attempt_at ? timeOf(delivery.next_attempt_at) : '<span class="muted">none</span>',
    endpoint.disabled || !hasRole(view.member, 'admin')
      ? ''
      : button(view, `${base}/deliveries/${encodeURIComponent(delivery.id)}/resend`, 'Resend', `Resend ${delivery.id}`),
  ]);
  return `<h4>Recent deliveries</h4>
${table(`Deliveries to ${endpoint.url}`, ['Event', 'Status', 'Attempts', 'Last answer', 'Next attempt', ''], rows, 'No deliveries yet.')}
${endpoint.disabled && rows.length ? '<p class="muted">Enable the endpoint to send deliveries again.</p>' : ''}`;
}

/** How long a replaced signing secret keeps signing beside the new one (the API allows up to a day). */
export const SECRET_OVERLAPS: ReadonlyArray<readonly [number, string]> = [
  [0, 'Now'],
  [3600, 'In 1 hour'],
  [86_400, 'In 24 hours'],
];

/** Disable or enable, rotate the secret and delete, each destructive one asked again. */
function actions(view: ConsoleView, endpoint: WebhookEndpointOut, toggle: string): string {
  const base = `/console/webhooks/${encodeURIComponent(endpoint.id)}`;
  const mode = `<input type="hidden" name="mode" value="${view.mode}">`;
  return `<div class="actions">${toggle}
${confirmForm(view.member, {
  url: `${base}/rotate`,
  summary: 'Rotate secret…',
  question:
    'Make a new signing secret? Deliveries are signed with both until the old secret stops; after that, a receiver checking only the old secret refuses them.',
  button: 'Rotate secret',
  label: `Rotate secret of ${endpoint.id}`,
  fields: `${mode}<label for="overlap-${escapeHtml(endpoint.id)}">Old secret stops</label><select id="overlap-${escapeHtml(endpoint.id)}" name="overlap_seconds">${SECRET_OVERLAPS.map(
    ([seconds, words]) => `<option value="${seconds}">${words}</option>`,
  ).join('')}</select>`,
})}
${confirmForm(view.member, {
  url: `${base}/delete`,
  summary: 'Delete…',
  question: 'Delete this endpoint? It gets no more events, and its deliveries are forgotten.',
  button: 'Delete endpoint',
  label: `Delete endpoint ${endpoint.id}`,
  fields: mode,
})}</div>`;
}

function endpointSection(view: ConsoleView, item: EndpointView): string {
  const { endpoint } = item;
  const base = `/console/webhooks/${encodeURIComponent(endpoint.id)}`;
  const events = endpoint.enabled_events.includes('*') ? 'all events' : endpoint.enabled_events.map((type) => `<code>${type}</code>`).join(' ');
  const toggle = endpoint.disabled
    ? button(view, `${base}/enable`, 'Enable', `Enable ${endpoint.id}`, '')
    : button(view, `${base}/disable`, 'Disable', `Disable ${endpoint.id}`);
  return `<section class="panel endpoint" id="${escapeHtml(endpoint.id)}" aria-labelledby="${escapeHtml(endpoint.id)}-url">
<h3 id="${escapeHtml(endpoint.id)}-url"><code>${escapeHtml(endpoint.url)}</code></h3>
<dl>
<dt>Id</dt><dd><code>${escapeHtml(endpoint.id)}</code></dd>
<dt>Events</dt><dd>${events}</dd>
<dt>Description</dt><dd>${endpoint.description ? escapeHtml(endpoint.description) : '<span class="muted">none</span>'}</dd>
<dt>State</dt><dd>${stateOf(endpoint)}</dd>
<dt>Created</dt><dd>${timeOf(endpoint.created_at)}</dd>
</dl>
${hasRole(view.member, 'admin') ? actions(view, endpoint, toggle) : ''}
${deliveriesTable(view, item)}
</section>`;
}

/** The signing secret of an endpoint just made or rotated: shown this once, kept sealed. */
const secretBox = ({ endpoint, secret, rotated }: NonNullable<WebhooksOutcome['secret']>) => `<section class="secret" aria-labelledby="new-secret-title">
<h3 id="new-secret-title">${rotated ? 'New signing secret' : 'Signing secret'} of <code>${escapeHtml(endpoint.url)}</code></h3>
<p>Copy it now: it is not shown again.${
  rotated
    ? endpoint.previous_secret_expires_at
      ? ` Deliveries are signed with it and with the old secret until ${endpoint.previous_secret_expires_at.slice(0, 16).replace('T', ' ')} UTC.`
      : ' Deliveries are signed with it from now on; the old secret no longer counts.'
    : ''
}</p>
<p><code id="new-secret" class="key">${escapeHtml(secret)}</code></p>
<button type="button" data-copy="new-secret">Copy</button>
</section>`;

function createForm(view: ConsoleView, refused?: WebhooksOutcome['refused']): string {
  const form = refused?.form ?? BLANK_FORM;
  const checked = (on: boolean) => (on ? ' checked' : '');
  const types = EVENT_TYPES.map(
    (type) => `<label class="choice"><input type="checkbox" name="events" value="${type}"${checked(form.events.includes(type))}> <code>${type}</code></label>`,
  ).join('');
  return `<form class="panel" method="post" action="/console/webhooks">
<h3>Add a ${view.mode} endpoint</h3>
${refused ? `<p class="error" role="alert">${escapeHtml(refused.message)}</p>` : ''}${formFields(view)}
<label for="webhook-url">URL</label>
<input id="webhook-url" name="url" type="url" required maxlength="${URL_MAX_LENGTH}" placeholder="https://example.com/webhooks" value="${escapeHtml(form.url)}">
<label for="webhook-description">Description <span class="muted">(optional)</span></label>
<input id="webhook-description" name="description" type="text" maxlength="${DESCRIPTION_MAX_LENGTH}" value="${escapeHtml(form.description)}">
<fieldset><legend>Events</legend>
<label class="choice"><input type="radio" name="events_scope" value="all"${checked(form.scope !== 'some')}> All events</label>
<label class="choice"><input type="radio" name="events_scope" value="some"${checked(form.scope === 'some')}> Only the types checked:</label>
<div class="event-types">${types}</div>
</fieldset>
<button type="submit">Add endpoint</button>
</form>`;
}

export function webhooksPage(view: ConsoleView, endpoints: EndpointView[], outcome: WebhooksOutcome = {}): string {
  return consolePage(
    view,
    'Webhooks',
    `${outcome.secret ? secretBox(outcome.secret) : ''}
<p class="muted">The organization's ${view.mode} events are POSTed to each enabled endpoint that wants their type, signed with its secret.</p>
${endpoints.length ? endpoints.map((item) => endpointSection(view, item)).join('\n') : `<p class="muted empty">No ${view.mode} webhook endpoints yet.</p>`}
${hasRole(view.member, 'admin') ? createForm(view, outcome.refused) : ''}`,
  );
}
