// Swagger UI over /openapi.json, set up for trying the API out: the authorization is kept across
// reloads (this browser's localStorage), operations can be filtered by tag, the Idempotency-Key is left
// empty (the contract's example, sent with every POST, made the second POST to another operation fail
// with 422 idempotency_key_reused and the same POST twice replay the first answer), and event streams
// say they are streams, to be read with `curl -N`: Try it out waits for an answer's end, which a
// stream never reaches.

const streams = (operation) =>
  Object.values(operation.responses || {}).some((response) => response && response.content && response.content['text/event-stream']);

function streamNote(contract, path, operation) {
  const security = JSON.stringify(operation.security || contract.security || []);
  const credential = security.includes('ChatKey') ? "X-Chat-Key: $CHAT_KEY" : 'Authorization: Bearer $API_KEY';
  const server = contract.servers[0].url;
  return [
    '**A stream of Server-Sent Events** (`text/event-stream`): the answer never ends, so *Try it out* cannot show it.',
    'Read it with `curl -N` (no buffering), for example:',
    '',
    `    curl -N -H '${credential}' '${server}${path}'`,
    '',
  ].join('\n');
}

function forTrying(contract) {
  // Tried from the server the page came from, when that is not the public address (a local or internal name).
  const servers = contract.servers || [];
  if (!servers.some((server) => server.url === location.origin)) contract.servers = [{ url: location.origin, description: 'The server of this page' }, ...servers];
  for (const parameter of Object.values((contract.components && contract.components.parameters) || {})) {
    if (parameter.in !== 'header' || parameter.name !== 'Idempotency-Key') continue;
    delete parameter.example;
    delete parameter.examples;
    parameter.description = `${parameter.description || ''}\n\nLeft empty here: give one only to try a retry.`;
  }
  for (const [path, item] of Object.entries(contract.paths || {})) {
    for (const operation of Object.values(item)) {
      if (operation && typeof operation === 'object' && streams(operation)) {
        operation.description = `${streamNote(contract, path, operation)}\n${operation.description || ''}`;
      }
    }
  }
  return contract;
}

/**
 * Swagger UI puts an operation's path, as a link to it, inside the button that opens the operation (axe:
 * nested-interactive): the path is shown as text instead; deepLinking still puts the open operation in the address.
 */
const PathsAsText = (system) => ({
  wrapComponents: { DeepLink: () => (props) => system.React.createElement('span', null, props.text) },
});

/** Controls Swagger UI leaves without a name (axe: label, select-name, button-name), named as they appear. */
const UNNAMED = [
  ['select#servers', 'Server'],
  ['select.examples-select-element', 'Example'],
  ['textarea.body-param__text', 'Request body'],
  ['button.close-modal', 'Close'],
];
/** Buttons whose label differs from the words they show (axe: label-content-name-mismatch): their words name them. */
const MISNAMED = '.auth-btn-wrapper button[aria-label]';

function nameControls(root) {
  const name = () => {
    for (const [selector, label] of UNNAMED) {
      for (const control of root.querySelectorAll(`${selector}:not([aria-label])`)) control.setAttribute('aria-label', label);
    }
    for (const button of root.querySelectorAll(MISNAMED)) button.removeAttribute('aria-label');
  };
  new MutationObserver(name).observe(root, { childList: true, subtree: true });
}

nameControls(document.getElementById('reference'));
fetch('/openapi.json')
  .then((response) => response.json())
  .then((contract) => {
    // validatorUrl null: Swagger UI would otherwise send the document to an online validator.
    window.ui = SwaggerUIBundle({
      spec: forTrying(contract),
      dom_id: '#reference',
      validatorUrl: null,
      deepLinking: true,
      persistAuthorization: true,
      filter: true,
      tryItOutEnabled: false,
      plugins: [PathsAsText],
    });
  });
