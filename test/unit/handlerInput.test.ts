// What a handler gets and may give, from the contract: codegen's reading of each operation's security
// and uploads, its stub, and (checked by `tsc`, which `npm test` runs first) the typed input and answers.
import { describe, expect, it } from 'vitest';
import { listOperations, readSpec, stubSource } from '../../codegen/outputs.js';
import { defineHandler } from '../../src/http/handler.js';

describe('handler inputs from the contract', () => {
  it('reads how each operation is authenticated and which multipart fields carry files', () => {
    const byId = new Map(listOperations(readSpec()).map((op) => [op.operationId, op]));
    const inputs = (id: string) => ({ auth: byId.get(id)?.auth, files: byId.get(id)?.files });
    expect(inputs('createVoiceMessage')).toEqual({ auth: 'api', files: ['audio'] });
    expect(inputs('postChatVoiceMessage')).toEqual({ auth: 'chatKey', files: ['audio'] });
    expect(inputs('streamChat')).toEqual({ auth: 'chatKey', files: [] });
    expect(inputs('joinCall')).toEqual({ auth: 'callKey', files: [] });
    expect(inputs('adminCreateOrg')).toEqual({ auth: 'admin', files: [] });
    expect(inputs('getHealth')).toEqual({ auth: 'none', files: [] });
  });

  it('finds file fields behind $refs to request bodies, schemas and properties, and nowhere else', () => {
    const spec = {
      paths: {
        '/upload': {
          post: { operationId: 'upload', tags: ['t'], security: [], requestBody: { $ref: '#/components/requestBodies/Upload' } },
        },
        '/json': {
          post: {
            operationId: 'json',
            tags: ['t'],
            security: [],
            requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Form' } } } },
          },
        },
      },
      components: {
        requestBodies: { Upload: { content: { 'multipart/form-data': { schema: { $ref: '#/components/schemas/Form' } } } } },
        schemas: {
          Form: {
            type: 'object',
            properties: {
              picture: { $ref: '#/components/schemas/Binary' },
              note: { type: 'string' },
              scan: { type: 'string', format: 'binary' },
            },
          },
          Binary: { type: 'string', format: 'binary' },
        },
      },
    };
    const files = Object.fromEntries(listOperations(spec).map((op) => [op.operationId, op.files]));
    expect(files).toEqual({ upload: ['picture', 'scan'], json: [] });
  });

  it('starts a new operation with a defineHandler that does not compile until it answers', () => {
    const [op] = listOperations({ paths: { '/x': { get: { operationId: 'getX', tags: ['things'], security: [] } } } });
    expect(stubSource(op)).toBe(
      [
        "import { defineHandler } from '../../src/http/handler.js';",
        '',
        "export default defineHandler<'getX'>(async (input) => {",
        "  // Return one of the operation's documented answers; until then this does not compile.",
        '});',
        '',
      ].join('\n'),
    );
  });
});

// Compile-time checks: each `@ts-expect-error` fails the type check if the line it guards compiles
// (bodies are cast to `never` so that nothing else on the line can be the error).
export const typedInputs = [
  // @ts-expect-error a handler that answers nothing (codegen's start of a new one) does not compile
  defineHandler<'getAccount'>(async (input) => {
    void input;
  }),
  // @ts-expect-error a chat key operation has no API principal
  defineHandler<'joinChat'>(async ({ principal }) => ({ status: 200, body: principal as never })),
  // @ts-expect-error an API operation has no call side
  defineHandler<'getAccount'>(async ({ callSide }) => ({ status: 200, body: callSide as never })),
  // @ts-expect-error only operations whose contract takes files have them
  defineHandler<'createMessage'>(async ({ files }) => ({ status: 201, body: files as never })),
  // @ts-expect-error the voice upload's file field is `audio`
  defineHandler<'createVoiceMessage'>(async ({ files }) => ({ status: 201, body: files.sender as never })),
  // @ts-expect-error an event stream operation answers with a stream, not JSON
  defineHandler<'streamEvents'>(async () => ({ status: 200, body: {} as never })),
  // @ts-expect-error a recording is bytes, not JSON
  defineHandler<'getMessageAudio'>(async () => ({ status: 200, body: {} as never })),
  // @ts-expect-error a JSON operation does not answer with bytes
  defineHandler<'getAccount'>(async () => ({ status: 200, binary: { contentType: 'audio/wav', data: Buffer.alloc(0) } })),
];
