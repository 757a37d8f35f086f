// What `npm run codegen:check` holds the contract to beyond drift: examples that match their schemas,
// no defaults on request properties (openapi-typescript's default flags would make them required), and
// request schemas that are strict and bounded.
import { describe, expect, it } from 'vitest';
import { invalidExamples } from '../../codegen/examples.js';
import { readSpec, requestDefaults, unboundedRequestSchemas } from '../../codegen/outputs.js';

describe('contract checks', () => {
  it('finds no invalid example and no request default in the contract', () => {
    const spec = readSpec();
    expect(invalidExamples(spec)).toEqual([]);
    expect(requestDefaults(spec)).toEqual([]);
    expect(unboundedRequestSchemas(spec)).toEqual([]);
  });

  it('names an example its schema refuses, wherever it is: media type, named example, parameter, schema', () => {
    const spec = readSpec();
    spec.paths['/v1/account'].get.responses['200'].content['application/json'].example.balance = 'lots';
    spec.components.examples.JoinOut.value = { ...spec.components.examples.JoinOut.value, role: 'caller' };
    spec.components.parameters.MessageId.example = 0;
    spec.components.schemas.Side.example = 'nobody';
    const problems = invalidExamples(spec);
    expect(problems).toContainEqual(expect.stringMatching(/^#\/paths\/~1v1~1account\/get\/responses\/200\/.*\/example .*\/balance must be number/));
    expect(problems).toContainEqual(expect.stringMatching(/^#\/paths\/~1calls~1public~1\{call_id\}\/get\/.*examples\/join .*\/role must be equal to one of the allowed values/));
    expect(problems).toContainEqual(expect.stringMatching(/^#\/components\/parameters\/MessageId\/example .*must be >= 1/));
    expect(problems).toContainEqual(expect.stringMatching(/^#\/components\/schemas\/Side\/example .*allowed values/));
  });

  it('names a request property with a default, also behind $refs and allOf', () => {
    const spec = readSpec();
    spec.components.schemas.ApiCallCreate.properties.video.default = true;
    spec.components.schemas.DialIn.properties.side.default = 'customer';
    expect(requestDefaults(spec)).toEqual([
      'createCall application/json: property video has a default',
      'dialCall application/json: property side has a default',
    ]);
  });

  it('names a request object that takes unknown fields, a free-form object without maxProperties and a list without maxItems', () => {
    const spec = readSpec();
    delete spec.components.schemas.ApiCallCreate.additionalProperties;
    delete spec.components.schemas.Metadata.maxProperties;
    delete spec.components.schemas.AdminAppCreate.properties.redirect_uris.maxItems;
    // OAuth's forms take unknown parameters (RFC 6749 3.2); a JSON body may not.
    spec.components.schemas.TypingIn.additionalProperties = true;
    expect(unboundedRequestSchemas(spec).sort()).toEqual([
      'adminCreateApp application/json.redirect_uris: a list needs maxItems',
      'createCall application/json.metadata: a free-form object needs maxProperties',
      'createCall application/json: an object with named fields needs additionalProperties: false',
      'createPhoneNumber application/json.metadata: a free-form object needs maxProperties',
      'createSession application/json.metadata: a free-form object needs maxProperties',
      'sendTyping application/json: an object with named fields needs additionalProperties: false',
    ]);
  });
});
