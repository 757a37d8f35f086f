// Members' passwords: a server hashes at OWASP's argon2id setting; any stored hash is checked with its own
// parameters (the tests' servers hash at the cheapest cost, test/support/testServer.ts).
import { describe, expect, it } from 'vitest';
import { argon2idPasswords } from '../../src/members/passwords.js';

const PASSWORD = 'correct horse battery staple';

describe('argon2id passwords', () => {
  it("hash at OWASP's setting by default, with a salt of their own, and check right, wrong, unknown and malformed", async () => {
    const passwords = argon2idPasswords();
    const stored = await passwords.hash(PASSWORD);
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await passwords.hash(PASSWORD)).not.toBe(stored);
    expect(await passwords.check(stored, PASSWORD)).toBe(true);
    expect(await passwords.check(stored, `${PASSWORD}!`)).toBe(false);
    expect(await passwords.check(undefined, PASSWORD)).toBe(false);
    expect(await passwords.check('$argon2id$not-a-hash', PASSWORD)).toBe(false);
  });

  it('check a hash made at another cost with the parameters it carries', async () => {
    const cheap = argon2idPasswords({ memoryCost: 8, timeCost: 1, parallelism: 1 });
    const stored = await cheap.hash(PASSWORD);
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=8,t=1,p=1\$/);
    expect(await argon2idPasswords().check(stored, PASSWORD)).toBe(true);
    expect(await cheap.check(await argon2idPasswords().hash(PASSWORD), PASSWORD)).toBe(true);
  });
});
