// Console sign-in throttling never locks the rightful member out: refusals slow down the address they
// came from and the email they were for, doubling from one second after the free ones up to a ceiling;
// an address that has not been failing signs in with the right password however hard the email is being
// guessed at. The server's clock is frozen on a whole second, so each wait is exact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { addMember, PASSWORD, visitor } from '../support/consoleVisitor.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

describe(`console sign-in throttling (${backendName})`, () => {
  let t: TestServer;
  let now: number;
  beforeAll(async () => {
    t = await startTestServer({ TRUST_PROXY: '1', SIGN_IN_FREE_FAILURES: '3', SIGN_IN_MAX_DELAY_SECONDS: '8' });
    const orgId = await t.createOrg();
    await addMember(t, orgId, 'target@throttle.example');
    await addMember(t, orgId, 'other@throttle.example');
    now = Math.floor(Date.now() / 1000) * 1000;
    t.server.app.now = () => now;
  });
  afterAll(() => t?.stop());

  let fresh = 0;
  /** A client address that has never sent anything. */
  const newAddress = () => `203.0.113.${++fresh}`;
  const signIn = (address: string, email: string, password: string) => visitor(t, { 'X-Forwarded-For': address }).signIn(email, password);

  it('slows a guessed-at email down exponentially for failing addresses, up to the ceiling, and lets a non-failing address through', async () => {
    const guessers: string[] = [];
    /** Refused once for the target from a new address; the Retry-After a failing address then gets with the right password. */
    const refuseAndWait = async () => {
      const address = newAddress();
      guessers.push(address);
      expect((await signIn(address, 'target@throttle.example', 'a-wrong-guess-1')).status).toBe(401);
      const slowed = await signIn(guessers[0]!, 'target@throttle.example', PASSWORD);
      return slowed.status === 429 ? Number(slowed.headers.get('retry-after')) : slowed.status;
    };
    expect(await refuseAndWait()).toBe(303);
    expect(await refuseAndWait()).toBe(303);
    // From the third refusal on: 1, 2, 4, 8 seconds, then the ceiling (8).
    const waits = [];
    for (let i = 0; i < 5; i++) waits.push(await refuseAndWait());
    expect(waits).toEqual([1, 2, 4, 8, 8]);

    // The rightful member from an address that has not been failing: straight in.
    expect((await signIn(newAddress(), 'target@throttle.example', PASSWORD)).status).toBe(303);
    // The failing address may try the guessed-at email again once the wait is over, and other emails at once.
    expect((await signIn(guessers[1]!, 'other@throttle.example', PASSWORD)).status).toBe(303);
    now += 8000;
    expect((await signIn(guessers[1]!, 'target@throttle.example', PASSWORD)).status).toBe(303);
  });

  it('slows down an address that keeps failing, whatever emails it tries, and not other addresses', async () => {
    const guesser = newAddress();
    for (const n of [1, 2, 3]) expect((await signIn(guesser, `nobody${n}@throttle.example`, 'a-wrong-guess-2')).status).toBe(401);
    const slowed = await signIn(guesser, 'other@throttle.example', PASSWORD);
    expect(slowed.status).toBe(429);
    expect(slowed.headers.get('retry-after')).toBe('1');
    expect(await slowed.text()).toContain('Too many failed sign-ins. Try again in 1 seconds.');
    now += 1000;
    expect((await signIn(guesser, 'nobody4@throttle.example', 'a-wrong-guess-2')).status).toBe(401);
    expect((await signIn(guesser, 'other@throttle.example', PASSWORD)).headers.get('retry-after')).toBe('2');
    expect((await signIn(newAddress(), 'other@throttle.example', PASSWORD)).status).toBe(303);
    // Refusals older than an hour no longer count.
    now += 3600_000;
    expect((await signIn(guesser, 'other@throttle.example', PASSWORD)).status).toBe(303);
  });
});
