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
    });
  });
