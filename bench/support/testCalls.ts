// Test-mode calls for the media benchmarks, made as a user would: created with the API key, each side
// joined with its link's key (what the call page does), whose answer says where its sockets go.
import type { Target } from '../mediaLoad.js';

/** A side's answer of GET /calls/public/{id}: its sockets' paths and credentials. */
export type SideJoin = Record<string, any>;

export interface TestCall {
  id: string;
  agent: SideJoin;
  customer: SideJoin;
}

/** `count` open calls (audio only; test mode with a test key), both sides joined; made 20 at a time; `options` go into each POST /v1/calls. */
export async function createTestCalls(baseUrl: string, key: string, count: number, options: Record<string, unknown> = {}): Promise<TestCall[]> {
  const api = async (path: string, init: RequestInit) => {
    const res = await fetch(baseUrl + path, init);
    if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, any>;
  };
  const join = (callId: string, link: string) => api(`/calls/public/${callId}`, { headers: { 'X-Call-Key': link.split('#k=')[1]! } });
  const calls: TestCall[] = [];
  for (let i = 0; i < count; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, count - i) }, async () => {
        const call = await api('/v1/calls', {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ agent_language: 'en', customer_language: 'fi', video: false, ...options }),
        });
        const [agent, customer] = await Promise.all([join(call.id, call.agent_url), join(call.id, call.customer_url)]);
        return { id: call.id as string, agent: agent!, customer: customer! };
      }),
    );
    calls.push(...batch);
  }
  return calls;
}

/** Ends the calls (their sockets close, their rooms go). */
export async function endTestCalls(baseUrl: string, key: string, calls: readonly TestCall[]): Promise<void> {
  for (let i = 0; i < calls.length; i += 20) {
    await Promise.all(
      calls.slice(i, i + 20).map(async (call) => {
        const res = await fetch(`${baseUrl}/v1/calls/${call.id}/end`, { method: 'POST', headers: { Authorization: `Bearer ${key}` } });
        await res.body?.cancel();
      }),
    );
  }
}

const wsBase = (baseUrl: string) => baseUrl.replace(/^http/, 'ws');

/** The URL of a side's stream socket, at `baseUrl` (an instance, or a balancer in front). */
export const streamUrl = (baseUrl: string, side: SideJoin) =>
  `${wsBase(baseUrl)}${side.stream.path}?token=${encodeURIComponent(side.stream.token)}&source_id=${side.stream.source_id}`;

/** The URL of a side's listen socket, at `baseUrl`. */
export const listenUrl = (baseUrl: string, side: SideJoin) => `${wsBase(baseUrl)}${side.listen.path}?unlock=${encodeURIComponent(side.listen.unlock)}`;

/** A side's stream and listen sockets, at one address. */
export const sideTarget = (baseUrl: string, side: SideJoin): Target => ({ stream: streamUrl(baseUrl, side), listen: listenUrl(baseUrl, side) });
