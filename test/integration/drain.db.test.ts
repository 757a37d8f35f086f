// Stopping with a grace (SIGTERM with SHUTDOWN_GRACE_SECONDS): readiness turns 503 at once, new media
// sockets are refused (503, so clients go to another instance), the calls already open go on, and the
// stop completes as soon as the last of them has left, without waiting for the whole grace.
import { describe, expect, it } from 'vitest';
import { callApi, connect, Listener, listenUrl, pattern, refusal, streamUrl } from '../media/support.js';
import { backendName } from '../support/databases.js';
import { startTestServer } from '../support/testServer.js';

describe(`draining on stop (${backendName})`, () => {
  it('answers readiness 503, refuses new media sockets, keeps open calls going, and stops once they have left', async () => {
    const t = await startTestServer({ SHUTDOWN_GRACE_SECONDS: '12' });
    let stopped = false;
    let stopping: Promise<void> | undefined;
    try {
      const orgId = await t.createOrg();
      const { key } = await t.createKey(orgId, 'test');
      const calls = callApi(t);
      const open = await calls.createCall(key, { customer_language: 'es' });
      const agent = await calls.join(open.id, open.agentKey);
      const ear = await Listener.open(listenUrl(t, agent));
      const mic = await connect(streamUrl(t, agent));
      const later = await calls.createCall(key, { customer_language: 'de' });
      const laterJoin = await calls.join(later.id, later.agentKey);
      expect((await fetch(`${t.url}/readyz`)).status).toBe(200);

      stopping = t.server.stop().then(() => {
        stopped = true;
      });
      const ready = await fetch(`${t.url}/readyz`);
      expect(ready.status).toBe(503);
      expect((await ready.json()).detail).toMatch(/shutting down/);
      expect(await refusal(streamUrl(t, laterJoin))).toEqual({ status: 503, body: expect.objectContaining({ detail: 'the server is shutting down' }) });

      // The open call goes on: test mode echoes the side's own voice.
      const voice = pattern(4_800, 3);
      mic.send(voice);
      expect((await ear.waitForBytes(voice.length)).equals(voice)).toBe(true);
      expect(stopped).toBe(false);

      // The last sockets leave: the stop goes on at once (well inside the 12 s grace).
      mic.close();
      ear.close();
      await stopping;
    } finally {
      await t.stop(); // the same stop, once
    }
  });
});
