// Sign-in takes the same time whether the email is unknown, in one organization or in several: every
// sign-in makes the same number of password checks, all at once (decoys where memberships are missing).
// Counted here (never timed): the real check, wrapped to record each call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberByPassword } from '../../src/members/members.js';
import type { Passwords } from '../../src/members/passwords.js';
import { backendName } from '../support/databases.js';
import { addMember, PASSWORD } from '../support/consoleVisitor.js';
import { startTestServer, type TestServer } from '../support/testServer.js';

const stored: Array<string | undefined> = [];
/** The server's own passwords, each check recorded. */
const counted = (passwords: Passwords): Passwords => ({
  ...passwords,
  check(hash, password) {
    stored.push(hash);
    return passwords.check(hash, password);
  },
});

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
      stored.length = 0;
      const member = await memberByPassword({ db: t.server.app.db, passwords: counted(t.server.app.passwords) }, email, password);
      return { member, count: stored.length, real: stored.filter(Boolean).length };
    };
    expect(await made('nobody@checks.example', PASSWORD)).toEqual({ member: undefined, count: 5, real: 0 });
    const one = await made('one@checks.example', PASSWORD);
    expect(one).toMatchObject({ count: 5, real: 1 });
    expect(one.member?.email).toBe('one@checks.example');
    const three = await made('three@checks.example', 'a-wrong-password-here');
    expect(three).toEqual({ member: undefined, count: 5, real: 3 });
  });
});
