// Sign-in takes the same time whether the email is unknown, in one organization or in several: every
// sign-in makes the same number of password checks, all at once (decoys where memberships are missing).
// Counted here (never timed): the password module is wrapped to record each check.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { backendName } from '../support/databases.js';
import { addMember, PASSWORD } from '../support/consoleVisitor.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const checks = vi.hoisted(() => ({ stored: [] as Array<string | undefined> }));
vi.mock('../../src/members/passwords.js', async (original) => {
  const real = await original<typeof import('../../src/members/passwords.js')>();
  return {
    ...real,
    checkPassword: (stored: string | undefined, password: string) => {
      checks.stored.push(stored);
      return real.checkPassword(stored, password);
    },
  };
});

const { memberByPassword } = await import('../../src/members/members.js');

describe(`sign-in password checks (${backendName})`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    const [a, b, c] = [await t.createOrg(), await t.createOrg(), await t.createOrg()];
    await addMember(t, a, 'one@checks.example');
    for (const org of [a, b, c]) await addMember(t, org, 'three@checks.example');
  });
  afterAll(() => t?.stop());

  it('makes five checks for an unknown email, one membership and three, and finds the right member', async () => {
    const made = async (email: string, password: string) => {
      checks.stored = [];
      const member = await memberByPassword(t.server.app.db, email, password);
      return { member, count: checks.stored.length, real: checks.stored.filter(Boolean).length };
    };
    expect(await made('nobody@checks.example', PASSWORD)).toEqual({ member: undefined, count: 5, real: 0 });
    const one = await made('one@checks.example', PASSWORD);
    expect(one).toMatchObject({ count: 5, real: 1 });
    expect(one.member?.email).toBe('one@checks.example');
    const three = await made('three@checks.example', 'a-wrong-password-here');
    expect(three).toEqual({ member: undefined, count: 5, real: 3 });
  });
});
