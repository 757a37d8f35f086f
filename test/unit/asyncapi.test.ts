// The AsyncAPI document: its structure as AsyncAPI 3.0 defines it (no validator package is installed,
// so the rules that matter are checked here), every reference resolving, every payload a schema its own
// examples pass, and its codes the ones the code uses.
import { describe, expect, it } from 'vitest';
import { CLOSE, NOTICE, PEER_SIGNAL_TYPES, REFUSAL, SIGNAL_REFUSED } from '../../src/calls/media/protocol.js';
import { KIND, LINE_ERROR } from '../../src/calls/media/transports/audiosocket/protocol.js';
import { CLOSE as TWILIO_CLOSE } from '../../src/calls/media/transports/twilio/protocol.js';
import { contractCopy } from '../../src/http/contract.js';
import { bundleAsyncApi, readAsyncApiSource, servedAsyncApi } from '../../src/http/asyncapi.js';
import { schemaValidator } from '../support/contractSchemas.js';

type Json = Record<string, any>;

const ALLOWED = {
  root: ['asyncapi', 'id', 'info', 'servers', 'defaultContentType', 'channels', 'operations', 'components'],
  info: ['title', 'version', 'description', 'termsOfService', 'contact', 'license', 'tags', 'externalDocs'],
  server: ['host', 'protocol', 'protocolVersion', 'pathname', 'description', 'title', 'summary', 'variables', 'security', 'tags', 'externalDocs', 'bindings'],
  channel: ['address', 'messages', 'title', 'summary', 'description', 'servers', 'parameters', 'tags', 'externalDocs', 'bindings'],
  parameter: ['enum', 'default', 'description', 'examples', 'location'],
  operation: ['action', 'channel', 'title', 'summary', 'description', 'security', 'tags', 'externalDocs', 'bindings', 'traits', 'messages', 'reply'],
  message: ['headers', 'payload', 'correlationId', 'contentType', 'name', 'title', 'summary', 'description', 'tags', 'externalDocs', 'bindings', 'examples', 'traits'],
  components: ['schemas', 'servers', 'channels', 'operations', 'messages', 'securitySchemes', 'serverVariables', 'parameters', 'correlationIds', 'replies', 'replyAddresses', 'externalDocs', 'tags', 'operationTraits', 'messageTraits', 'serverBindings', 'channelBindings', 'operationBindings', 'messageBindings'],
  wsChannelBinding: ['method', 'query', 'headers', 'bindingVersion'],
  httpOperationBinding: ['method', 'query', 'bindingVersion'],
};

/** Keys outside the object's fixed fields (specification extensions `x-` aside). */
const unknownKeys = (object: Json, allowed: string[]) => Object.keys(object).filter((key) => !allowed.includes(key) && !key.startsWith('x-'));

/** What a local reference points to, following references on the way. */
function at(document: Json, ref: string): any {
  let node: any = document;
  for (const part of ref.replace(/^#\//, '').split('/')) {
    while (typeof node?.$ref === 'string') node = at(document, node.$ref);
    node = node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

function refsOf(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => refsOf(item, found));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else refsOf(value, found);
    }
  }
  return found;
}

/** Problems with `document` as an AsyncAPI 3.0 document. */
function asyncApiProblems(document: Json): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, problem: string) => ok || problems.push(problem);
  const keys = (where: string, object: Json, allowed: string[]) => unknownKeys(object, allowed).forEach((key) => problems.push(`${where}: unknown field ${key}`));
  check(document.asyncapi === '3.0.0', 'asyncapi must be 3.0.0');
  keys('root', document, ALLOWED.root);
  keys('info', document.info, ALLOWED.info);
  check(typeof document.info?.title === 'string' && typeof document.info?.version === 'string', 'info needs title and version');
  for (const [id, server] of Object.entries<Json>(document.servers ?? {})) {
    keys(`server ${id}`, server, ALLOWED.server);
    check(typeof server.host === 'string' && typeof server.protocol === 'string', `server ${id} needs host and protocol`);
  }
  for (const [id, channel] of Object.entries<Json>(document.channels ?? {})) {
    keys(`channel ${id}`, channel, ALLOWED.channel);
    check(channel.address === null || typeof channel.address === 'string', `channel ${id}: address is a string or null`);
    const placeholders = [...(channel.address ?? '').matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).sort();
    check(JSON.stringify(placeholders) === JSON.stringify(Object.keys(channel.parameters ?? {}).sort()), `channel ${id}: parameters must match the address's placeholders`);
    for (const [name, parameter] of Object.entries<Json>(channel.parameters ?? {})) keys(`channel ${id} parameter ${name}`, parameter, ALLOWED.parameter);
    for (const server of channel.servers ?? []) check(/^#\/servers\/[^/]+$/.test(server.$ref), `channel ${id}: servers are references to servers`);
    if (channel.bindings?.ws) keys(`channel ${id} ws binding`, channel.bindings.ws, ALLOWED.wsChannelBinding);
    check(Object.keys(channel.messages ?? {}).length > 0, `channel ${id} has no messages`);
  }
  for (const [id, operation] of Object.entries<Json>(document.operations ?? {})) {
    keys(`operation ${id}`, operation, ALLOWED.operation);
    check(['send', 'receive'].includes(operation.action), `operation ${id}: action is send or receive`);
    const channel = /^#\/channels\/([^/]+)$/.exec(operation.channel?.$ref ?? '')?.[1];
    check(channel !== undefined, `operation ${id}: channel is a reference to a channel`);
    // The specification: an operation's messages must be messages of its channel.
    for (const message of operation.messages ?? []) {
      check(message.$ref?.startsWith(`#/channels/${channel}/messages/`), `operation ${id}: message ${message.$ref} is not of its channel`);
    }
    if (operation.bindings?.http) keys(`operation ${id} http binding`, operation.bindings.http, ALLOWED.httpOperationBinding);
  }
  keys('components', document.components ?? {}, ALLOWED.components);
  for (const [id, message] of Object.entries<Json>(document.components?.messages ?? {})) keys(`message ${id}`, message, ALLOWED.message);
  for (const ref of refsOf(document)) check(ref.startsWith('#/') && at(document, ref) !== undefined, `unresolved $ref ${ref}`);
  return problems;
}

const source = await readAsyncApiSource();
const served = await servedAsyncApi({ publicBaseUrl: 'https://calls.example.com', audioSocketHost: 'pbx.example.com', audioSocketPort: 9092 });

describe('the AsyncAPI document', () => {
  const openapi = contractCopy();
  const payload = schemaValidator(served, 'asyncapi.json');
  const messageOf = (ref: string): Json => served.components.messages[ref.split('/').pop()!];
  const channelMessages = (channel: string) => Object.values<Json>(served.channels[channel].messages).map((ref) => messageOf(ref.$ref));

  it('is a valid AsyncAPI 3.0 document as served, every reference resolving within it', () => {
    expect(asyncApiProblems(served)).toEqual([]);
    expect(refsOf(served).filter((ref) => !ref.startsWith('#/'))).toEqual([]);
  });

  it('takes the event schemas from the contract as OpenAPI-format payloads, and the served copy converts them', () => {
    const external = refsOf(source).filter((ref) => !ref.startsWith('#/'));
    expect(external.length).toBeGreaterThan(0);
    for (const ref of external) {
      expect(ref).toMatch(/^openapi\.yaml#\/components\/schemas\//);
      expect(at(openapi, ref.replace(/^openapi\.yaml/, ''))).toBeDefined();
    }
    // The source is valid too, its references to the contract aside.
    expect(asyncApiProblems(source).filter((problem) => !problem.includes('openapi.yaml#'))).toEqual([]);
    expect(JSON.stringify(served)).not.toMatch(/"nullable"|"discriminator"|schemaFormat/);
    expect({ ...served, servers: undefined }).toEqual({ ...bundleAsyncApi(source, openapi), servers: undefined });
  });

  it("names this deployment's addresses as its servers", async () => {
    expect(served.servers.api).toMatchObject({ host: 'calls.example.com', protocol: 'wss' });
    expect(served.servers.events).toMatchObject({ host: 'calls.example.com', protocol: 'https' });
    expect(served.servers.audiosocket).toMatchObject({ host: 'pbx.example.com:9092', protocol: 'tcp' });
    const plain = await servedAsyncApi({ publicBaseUrl: 'http://localhost:8080', audioSocketHost: 'localhost', audioSocketPort: 9092 });
    expect([plain.servers.api.protocol, plain.servers.events.protocol]).toEqual(['ws', 'http']);
  });

  it('gives every message a payload schema that compiles and that its own examples pass', () => {
    for (const [id, message] of Object.entries<Json>(served.components.messages)) {
      const validate = payload(`#/components/messages/${id}/payload`);
      for (const example of message.examples ?? []) expect(validate(example.payload), `${id}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it("carries exactly the contract's event types on the organization stream, each with its own schema", () => {
    const mapping: Json = openapi.components.schemas.Event.discriminator.mapping;
    const names = channelMessages('organizationEvents').map((message) => message.name);
    expect(names.sort()).toEqual(Object.keys(mapping).sort());
    for (const message of channelMessages('organizationEvents')) {
      expect(message.payload.$ref).toBe(`#/components/schemas/${mapping[message.name].split('/').pop()}`);
    }
    const sessionTypes = channelMessages('sessionEvents').map((message) => message.name);
    expect(sessionTypes.every((type) => type.startsWith('session.') || type === 'message.created')).toBe(true);
    const ofSessions = Object.keys(mapping).filter((type) => type.startsWith('session.') || type === 'message.created');
    expect(sessionTypes.sort()).toEqual(ofSessions.sort());
  });

  it('lists the close codes, refusals, notices and signalling frames the media code uses', () => {
    const closes = (channel: string) => served.channels[channel]['x-close-codes'].map((close: Json) => `${close.code} ${close.reason}`).sort();
    const of = (...codes: Array<{ code: number; reason: string }>) => codes.map((close) => `${close.code} ${close.reason}`).sort();
    expect(closes('mediaStream')).toEqual(
      of(CLOSE.shuttingDown, CLOSE.textFrame, CLOSE.oddLength, CLOSE.tooBig, CLOSE.internal, CLOSE.callEnded, CLOSE.linkReplaced, CLOSE.sourceReplaced, CLOSE.left),
    );
    expect(closes('mediaListen')).toEqual(of(CLOSE.shuttingDown, CLOSE.internal, CLOSE.callEnded, CLOSE.linkReplaced, CLOSE.reconnect, CLOSE.left));
    expect(closes('mediaSignal')).toEqual(
      of(CLOSE.shuttingDown, CLOSE.signalBinary, ...Object.values(SIGNAL_REFUSED), CLOSE.signalTooBig, CLOSE.internal, CLOSE.callEnded, CLOSE.linkReplaced, CLOSE.left),
    );
    expect(closes('twilioMediaStream')).toEqual(
      of(...Object.values(TWILIO_CLOSE)),
    );
    const refusals = served.channels.mediaStream['x-refusals'].map((refusal: Json) => `${refusal.status} ${refusal.detail}`);
    for (const refusal of [REFUSAL.badSourceId, REFUSAL.badToken, REFUSAL.badUnlock, REFUSAL.unknownChannel, REFUSAL.callEnded, REFUSAL.notReady, REFUSAL.shuttingDown]) {
      expect(refusals).toContain(`${refusal.status} ${refusal.detail}`);
    }
    expect(served.components.schemas.NoticeFrame.properties.code.enum.sort()).toEqual(Object.values(NOTICE).sort());
    const pageSends = served.operations.receiveSignal.messages.map((ref: Json) => at(served, `${ref.$ref}/name`));
    expect(pageSends.sort()).toEqual([...PEER_SIGNAL_TYPES].sort());
    // What a page sends the server never sends back as it is: the other side's frames come only in their envelope.
    const serverSends = served.operations.sendSignal.messages.map((ref: Json) => at(served, `${ref.$ref}/name`));
    expect(serverSends.sort()).toEqual(['caption', 'ice_servers', 'peer', 'peer_signal']);
  });

  it('gives each AudioSocket message its kind and the error frame every code the server sends', () => {
    const kinds = channelMessages('audioSocket').map((message) => [message.name, message['x-audiosocket-kind']]);
    expect(Object.fromEntries(kinds)).toEqual({ uuid: KIND.uuid, audio: KIND.audio, dtmf: KIND.dtmf, hangup: KIND.hangup, error: KIND.error });
    const codes = served.components.messages.AudioSocketError['x-audiosocket-codes'].map((entry: Json) => entry.code);
    expect(codes.sort()).toEqual(Object.values(LINE_ERROR).sort());
  });
});
