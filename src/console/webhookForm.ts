// The console's form for a new webhook endpoint: what the member sent, kept as sent (a refused form is
// shown again as it was filled in), read into what `createEndpoint` takes, and a refusal put in words.
// The event types and lengths are the contract's, the same the API's validator checks; the service
// (src/webhooks/endpoints.ts) checks the rest: the URL, private addresses, the number of endpoints.
import { ApiError, errors, type ValidationIssue } from '../errors.js';
import { contract } from '../http/contract.js';
import { unstorableParts } from '../http/storableInput.js';
import type { NewEndpoint, WebhookEventType } from '../webhooks/endpoints.js';
import type { PageWords } from '../web/i18n/catalogue.js';

const schemas = contract.components.schemas;
/** The event types an endpoint may ask for by name, in the contract's order; `*` is the form's "All events". */
export const EVENT_TYPES: readonly WebhookEventType[] = (schemas.WebhookEventType.enum as WebhookEventType[]).filter((type) => type !== '*');
export const URL_MAX_LENGTH: number = schemas.WebhookEndpointIn.properties.url.maxLength;
export const DESCRIPTION_MAX_LENGTH: number = schemas.WebhookEndpointIn.properties.description.maxLength;

export interface EndpointForm {
  url: string;
  description: string;
  /** `all` (every event) or `some` (the types checked). */
  scope: string;
  events: string[];
}

export const BLANK_FORM: EndpointForm = { url: '', description: '', scope: 'all', events: [] };

const FIELD_NAMES: Record<string, string> = { url: 'URL', description: 'Description', enabled_events: 'Events' };
const FIELD_KEYS: Record<string, string> = { url: 'console.webhooks.url', description: 'console.webhooks.description', enabled_events: 'console.webhooks.events' };

const issue = (field: string, msg: string): ValidationIssue => ({ loc: ['body', field], msg, type: 'console_form' });

/** The new endpoint the form asks for; a 422 naming each problem otherwise. */
export function endpointInput(form: EndpointForm): NewEndpoint {
  const issues = unstorableParts([['body', { url: form.url, description: form.description }]]);
  if (form.url.length > URL_MAX_LENGTH) issues.push(issue('url', `must be at most ${URL_MAX_LENGTH} characters`));
  if (form.description.length > DESCRIPTION_MAX_LENGTH) issues.push(issue('description', `must be at most ${DESCRIPTION_MAX_LENGTH} characters`));
  const unknown = form.events.find((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (form.scope !== 'all' && form.scope !== 'some') issues.push(issue('enabled_events', 'choose all events or some event types'));
  else if (unknown !== undefined) issues.push(issue('enabled_events', `${unknown} is not an event type`));
  else if (form.scope === 'some' && !form.events.length) issues.push(issue('enabled_events', 'choose at least one event type, or all events'));
  if (issues.length) throw errors.invalid(issues);
  return {
    url: form.url,
    enabled_events: form.scope === 'all' ? ['*'] : (form.events as WebhookEventType[]),
    description: form.description || null,
  };
}

const stopped = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);
const sentence = (text: string) => stopped(`${text.charAt(0).toUpperCase()}${text.slice(1)}`);

/**
 * A refusal as the console says it: each problem, after the field it is about. The problems are the
 * API's (English) sentences; in another language each field is named, with the catalogue's words.
 */
export function refusalText(words: PageWords, err: ApiError): string {
  if (words.lang !== 'en') {
    const fields = typeof err.detail === 'string' ? [] : [...new Set(err.detail.map(({ loc }) => FIELD_KEYS[String(loc[1])]).filter(Boolean))];
    return fields.length ? fields.map((key) => words.t('console.webhooks.fieldRefused', { field: words.t(key) })).join(' ') : words.t(`console.webhooks.refused`);
  }
  if (typeof err.detail === 'string') return sentence(err.detail);
  return err.detail
    .map(({ loc, msg }) => {
      const field = FIELD_NAMES[String(loc[1])];
      return field ? `${field}: ${stopped(msg)}` : sentence(msg);
    })
    .join(' ');
}
