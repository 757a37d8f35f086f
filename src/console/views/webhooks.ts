// Webhooks: the endpoints of the mode in view, newest first, each with its state and why, its actions
// (disable or enable, rotate the secret, delete after a confirmation) and its newest deliveries (each
// can be sent again); a form to add one; a new or rotated signing secret shown once with a copy button.
import type { DeliveryOut } from '../../webhooks/deliveries.js';
import type { WebhookEndpointOut } from '../../webhooks/endpoints.js';
import { RETRY_FOR_MS } from '../../webhooks/worker.js';
import { escapeHtml } from '../../web/html.js';
import { confirmForm, consolePage, csrfField, table, timeOf, wordsWithHtml, type ConsoleView } from '../layout.js';
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
  `<form class="inline" method="post" action="${action}">${formFields(view)}<button type="submit"${className ? ` class="${className}"` : ''} aria-label="${escapeHtml(name)}">${escapeHtml(label)}</button></form>`;

const stateOf = (view: ConsoleView, endpoint: WebhookEndpointOut) => {
  const { words } = view;
  if (!endpoint.disabled) return `<span class="status open">${escapeHtml(words.t('console.webhooks.enabled'))}</span>`;
  const why = endpoint.disabled_reason === 'failing' ? words.t('console.webhooks.failing', { days: RETRY_DAYS }) : words.t('console.webhooks.byMember');
  return `<strong>${escapeHtml(words.t('console.members.disabledState'))}</strong> ${timeOf(words, endpoint.disabled_at)}: ${escapeHtml(why)}`;
};

const lastAnswer = (view: ConsoleView, delivery: DeliveryOut) => {
  const last = delivery.attempts.at(-1);
  if (!last) return `<span class="muted">${escapeHtml(view.words.t('console.webhooks.notTried'))}</span>`;
  return last.status_code !== null ? `HTTP ${last.status_code}` : escapeHtml(last.error ?? view.words.t('console.webhooks.noAnswer'));
};

function deliveriesTable(view: ConsoleView, { endpoint, deliveries }: EndpointView): string {
  const { words } = view;
  const { t } = words;
  const base = `/console/webhooks/${encodeURIComponent(endpoint.id)}`;
  const rows = deliveries.map((delivery) => [
    `<code>${escapeHtml(delivery.event_type)}</code><br>${timeOf(words, delivery.created_at)}`,
    `<span class="delivery ${delivery.status}">${escapeHtml(t(`console.delivery.${delivery.status}`))}</span>`,
    String(delivery.attempts.length),
    lastAnswer(view, delivery),
    delivery.next_attempt_at ? timeOf(words, delivery.next_attempt_at) : `<span class="muted">${escapeHtml(t('console.none'))}</span>`,
    endpoint.disabled || !hasRole(view.member, 'admin')
      ? ''
      : button(view, `${base}/deliveries/${encodeURIComponent(delivery.id)}/resend`, t('console.webhooks.resend'), t('console.webhooks.resendLabel', { id: delivery.id })),
  ]);
  return `<h4>${escapeHtml(t('console.webhooks.recent'))}</h4>
${table(
  t('console.webhooks.deliveriesTo', { url: endpoint.url }),
  [t('console.webhooks.event'), t('console.status'), t('console.webhooks.attempts'), t('console.webhooks.lastAnswer'), t('console.webhooks.nextAttempt'), ''],
  rows,
  t('console.webhooks.noDeliveries'),
)}
${endpoint.disabled && rows.length ? `<p class="muted">${escapeHtml(t('console.webhooks.enableToSend'))}</p>` : ''}`;
}

/** How long a replaced signing secret keeps signing beside the new one (the API allows up to a day), with its catalogue key. */
export const SECRET_OVERLAPS: ReadonlyArray<readonly [number, string]> = [
  [0, 'console.overlap.now'],
  [3600, 'console.overlap.hour'],
  [86_400, 'console.overlap.day'],
];

/** Disable or enable, rotate the secret and delete, each destructive one asked again. */
function actions(view: ConsoleView, endpoint: WebhookEndpointOut, toggle: string): string {
  const { t } = view.words;
  const base = `/console/webhooks/${encodeURIComponent(endpoint.id)}`;
  const mode = `<input type="hidden" name="mode" value="${view.mode}">`;
  return `<div class="actions">${toggle}
${confirmForm(view.member, {
  url: `${base}/rotate`,
  summary: t('console.webhooks.rotateMore'),
  question: t('console.webhooks.rotateQuestion'),
  button: t('console.webhooks.rotate'),
  label: t('console.webhooks.rotateLabel', { id: endpoint.id }),
  fields: `${mode}<label for="overlap-${escapeHtml(endpoint.id)}">${escapeHtml(t('console.webhooks.oldStops'))}</label><select id="overlap-${escapeHtml(endpoint.id)}" name="overlap_seconds">${SECRET_OVERLAPS.map(
    ([seconds, key]) => `<option value="${seconds}">${escapeHtml(t(key))}</option>`,
  ).join('')}</select>`,
})}
${confirmForm(view.member, {
  url: `${base}/delete`,
  summary: t('console.webhooks.deleteMore'),
  question: t('console.webhooks.deleteQuestion'),
  button: t('console.webhooks.delete'),
  label: t('console.webhooks.deleteLabel', { id: endpoint.id }),
  fields: mode,
})}</div>`;
}

function endpointSection(view: ConsoleView, item: EndpointView): string {
  const { words } = view;
  const { t } = words;
  const { endpoint } = item;
  const base = `/console/webhooks/${encodeURIComponent(endpoint.id)}`;
  const events = endpoint.enabled_events.includes('*')
    ? escapeHtml(t('console.webhooks.allEvents'))
    : endpoint.enabled_events.map((type) => `<code>${type}</code>`).join(' ');
  const toggle = endpoint.disabled
    ? button(view, `${base}/enable`, t('console.members.enable'), t('console.members.enableLabel', { email: endpoint.id }), '')
    : button(view, `${base}/disable`, t('console.members.disable'), t('console.members.disableLabel', { email: endpoint.id }));
  return `<section class="panel endpoint" id="${escapeHtml(endpoint.id)}" aria-labelledby="${escapeHtml(endpoint.id)}-url">
<h3 id="${escapeHtml(endpoint.id)}-url"><code>${escapeHtml(endpoint.url)}</code></h3>
<dl>
<dt>${escapeHtml(t('console.webhooks.id'))}</dt><dd><code>${escapeHtml(endpoint.id)}</code></dd>
<dt>${escapeHtml(t('console.webhooks.events'))}</dt><dd>${events}</dd>
<dt>${escapeHtml(t('console.webhooks.description'))}</dt><dd>${endpoint.description ? escapeHtml(endpoint.description) : `<span class="muted">${escapeHtml(t('console.none'))}</span>`}</dd>
<dt>${escapeHtml(t('console.members.state'))}</dt><dd>${stateOf(view, endpoint)}</dd>
<dt>${escapeHtml(t('console.created'))}</dt><dd>${timeOf(words, endpoint.created_at)}</dd>
</dl>
${hasRole(view.member, 'admin') ? actions(view, endpoint, toggle) : ''}
${deliveriesTable(view, item)}
</section>`;
}

/** The signing secret of an endpoint just made or rotated: shown this once, kept sealed. */
const secretBox = (view: ConsoleView, { endpoint, secret, rotated }: NonNullable<WebhooksOutcome['secret']>) => {
  const { t } = view.words;
  const url = `<code>${escapeHtml(endpoint.url)}</code>`;
  const after = rotated
    ? endpoint.previous_secret_expires_at
      ? ` ${t('console.webhooks.bothUntil', { until: `${endpoint.previous_secret_expires_at.slice(0, 16).replace('T', ' ')} UTC` })}`
      : ` ${t('console.webhooks.newOnly')}`
    : '';
  return `<section class="secret" aria-labelledby="new-secret-title">
<h3 id="new-secret-title">${wordsWithHtml(view.words, rotated ? 'console.webhooks.newSecretOf' : 'console.webhooks.secretOf', { url })}</h3>
<p>${escapeHtml(`${t('console.copyNow')}${after}`)}</p>
<p><code id="new-secret" class="key">${escapeHtml(secret)}</code></p>
<button type="button" data-copy="new-secret">${escapeHtml(t('console.copy'))}</button>
</section>`;
};

function createForm(view: ConsoleView, refused?: WebhooksOutcome['refused']): string {
  const { t } = view.words;
  const form = refused?.form ?? BLANK_FORM;
  const checked = (on: boolean) => (on ? ' checked' : '');
  const types = EVENT_TYPES.map(
    (type) => `<label class="choice"><input type="checkbox" name="events" value="${type}"${checked(form.events.includes(type))}> <code>${type}</code></label>`,
  ).join('');
  return `<form class="panel" method="post" action="/console/webhooks">
<h3>${escapeHtml(t(view.mode === 'live' ? 'console.webhooks.addLive' : 'console.webhooks.addTest'))}</h3>
${refused ? `<p class="error" role="alert">${escapeHtml(refused.message)}</p>` : ''}${formFields(view)}
<label for="webhook-url">${escapeHtml(t('console.webhooks.url'))}</label>
<input id="webhook-url" name="url" type="url" required maxlength="${URL_MAX_LENGTH}" placeholder="https://example.com/webhooks" value="${escapeHtml(form.url)}">
<label for="webhook-description">${escapeHtml(t('console.webhooks.description'))} <span class="muted">${escapeHtml(t('console.optional'))}</span></label>
<input id="webhook-description" name="description" type="text" maxlength="${DESCRIPTION_MAX_LENGTH}" value="${escapeHtml(form.description)}">
<fieldset><legend>${escapeHtml(t('console.webhooks.events'))}</legend>
<label class="choice"><input type="radio" name="events_scope" value="all"${checked(form.scope !== 'some')}> ${escapeHtml(t('console.webhooks.allEventsChoice'))}</label>
<label class="choice"><input type="radio" name="events_scope" value="some"${checked(form.scope === 'some')}> ${escapeHtml(t('console.webhooks.someEvents'))}</label>
<div class="event-types">${types}</div>
</fieldset>
<button type="submit">${escapeHtml(t('console.webhooks.add'))}</button>
</form>`;
}

export function webhooksPage(view: ConsoleView, endpoints: EndpointView[], outcome: WebhooksOutcome = {}): string {
  const { t } = view.words;
  const live = view.mode === 'live';
  return consolePage(
    view,
    t('console.nav.webhooks'),
    `${outcome.secret ? secretBox(view, outcome.secret) : ''}
<p class="muted">${escapeHtml(t(live ? 'console.webhooks.introLive' : 'console.webhooks.introTest'))}</p>
${endpoints.length ? endpoints.map((item) => endpointSection(view, item)).join('\n') : `<p class="muted empty">${escapeHtml(t(live ? 'console.webhooks.noneLive' : 'console.webhooks.noneTest'))}</p>`}
${hasRole(view.member, 'admin') ? createForm(view, outcome.refused) : ''}`,
  );
}
