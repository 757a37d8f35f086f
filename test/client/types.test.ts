// The client's types, generated with openapi-typescript's default flags as an integrator's would be:
// compile-time checks (`npx tsc -p .`, part of `npm test`) that the obvious calls type-check.
import { describe, expect, it } from 'vitest';
import { createClient, unwrap } from '../../client/src/index.js';

const api = createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'spk_test_x' });

// Never called: type-checked only.
export async function typedCalls() {
  // Request fields with a server-side default (video, side) may be left out.
  const call = await unwrap(api.POST('/v1/calls', { body: { agent_language: 'en' } }));
  await unwrap(api.POST('/v1/calls/{call_id}/dial', { params: { path: { call_id: call.id } }, body: { to: '+358401234567' } }));
  await unwrap(api.POST('/v1/calls/{call_id}/phone-line', { params: { path: { call_id: call.id } }, body: {} }));
  const agentUrl: string = call.agent_url;
  const { error } = await api.GET('/v1/calls/{call_id}', { params: { path: { call_id: call.id } } });
  if (error) {
    // @ts-expect-error the error is the API's error body, not any
    const nothing: number = error.detail;
    void nothing;
  }
  // @ts-expect-error agent_language is required
  await api.POST('/v1/calls', { body: { video: false } });
  // @ts-expect-error no such path
  await api.GET('/v1/nothing');
  return agentUrl;
}

describe('client types', () => {
  it('is a client of the contract paths', () => {
    expect(typeof api.GET).toBe('function');
    expect(typeof api.events).toBe('function');
  });
});
