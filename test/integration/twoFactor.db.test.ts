// Two-factor sign-in (TOTP): a member sets it up with the secret the account page shows, gets recovery
// codes once, then signs in with password and code; a code or recovery code opens once; wrong codes are
// slowed down like wrong passwords; an owner can require it, and until then a member reaches only their
// account page. Codes are computed here with otpauth, as an authenticator app would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpiredChallenges } from '../../src/members/twoFactor.js';
import { backendName } from '../support/databases.js';
import { addMember, csrfOf, PASSWORD, visitor, type Visitor } from '../support/consoleVisitor.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { codeAt } from '../support/totp.js';

describe(`two-factor sign-in (${backendName})`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ TRUST_PROXY: '1' });
  });
  afterAll(() => t?.stop());

  const signedIn = async (email: string): Promise<{ member: Visitor; csrf: string }> => {
    const member = visitor(t, { 'X-Forwarded-For': '192.0.2.10' });
    expect((await member.signIn(email, PASSWORD)).status).toBe(303);
    return { member, csrf: csrfOf(await (await member.get('/console/account')).text()) };
  };
  /** Sets two-factor up for a signed-in member: the secret and the recovery codes. */
  const enroll = async (member: Visitor, csrf: string) => {
    expect((await member.post('/console/account/two-factor/start', { csrf_token: csrf })).status).toBe(303);
    const page = await (await member.get('/console/account')).text();
    expect(page).toContain('<svg');
    const secret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(page)![1]!;
    const wrong = await member.post('/console/account/two-factor/confirm', { csrf_token: csrf, code: '000000' === codeAt(secret) ? '111111' : '000000' });
    expect(wrong.status).toBe(422);
    const on = await member.follow(await member.post('/console/account/two-factor/confirm', { csrf_token: csrf, code: codeAt(secret) }));
    const html = await on.text();
    expect(html).toContain('Two-factor sign-in is on.');
    const codes = /<pre id="recovery-codes" class="key">([^<]+)<\/pre>/.exec(html)![1]!.split('\n');
    expect(codes).toHaveLength(10);
    // Shown once.
    expect(await (await member.get('/console/account')).text()).not.toContain(codes[0]);
    return { secret, codes };
  };
  /** Password, then the second step with `code`: the answer to the code. */
  const twoStep = async (email: string, code: string, address = '192.0.2.20') => {
    const v = visitor(t, { 'X-Forwarded-For': address });
    const first = await v.signIn(email, PASSWORD);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/console/sign-in/two-factor');
    // No session yet: the console still sends to sign-in.
    expect((await v.get('/console')).headers.get('location')).toMatch(/^\/console\/sign-in/);
    const page = await v.get('/console/sign-in/two-factor');
    expect(await page.text()).toContain('Authentication code');
    return { v, res: await v.post('/console/sign-in/two-factor', { code }) };
  };

  it('sets up with the app, then signs in with password and code; a code and a recovery code open once', async () => {
    const orgId = await t.createOrg();
    await addMember(t, orgId, 'two@factor.example');
    const { member, csrf } = await signedIn('two@factor.example');
    const { secret, codes } = await enroll(member, csrf);
    const row = await t.server.app.db('members').where({ email: 'two@factor.example' }).first();
    expect(row.totp_secret_sealed).not.toContain(secret);
    expect(JSON.stringify(await t.server.app.db('member_recovery_codes').where({ member_id: row.id }))).not.toContain(codes[0]);

    // The code used to turn it on was for this step: the next sign-in needs a newer one.
    const next = codeAt(secret, Date.now() + 30_000);
    const { v, res } = await twoStep('two@factor.example', next);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console');
    expect((await v.get('/console')).status).toBe(200);
    // The same code again (a replay): refused.
    expect((await twoStep('two@factor.example', next, '192.0.2.21')).res.status).toBe(401);

    const recovered = await twoStep('two@factor.example', codes[3]!.toUpperCase(), '192.0.2.22');
    expect(recovered.res.status).toBe(303);
    expect((await twoStep('two@factor.example', codes[3]!, '192.0.2.23')).res.status).toBe(401);
    expect(await (await member.get('/console/account')).text()).toContain('9 recovery codes left');

    // Turned off: the password alone signs in again.
    expect((await member.post('/console/account/two-factor/disable', { csrf_token: csrf })).status).toBe(303);
    expect((await visitor(t).signIn('two@factor.example', PASSWORD)).headers.get('location')).toBe('/console');
  });

  it('slows wrong codes down like wrong passwords, and a waiting sign-in without its cookie gets nothing', async () => {
    const orgId = await t.createOrg();
    await addMember(t, orgId, 'slow@factor.example');
    const { member, csrf } = await signedIn('slow@factor.example');
    await enroll(member, csrf);
    const v = visitor(t, { 'X-Forwarded-For': '198.51.100.30' });
    await v.signIn('slow@factor.example', PASSWORD);
    // The server's clock stands still on a whole second, so the wait is exactly the first one.
    const now = Math.floor(Date.now() / 1000) * 1000;
    t.server.app.now = () => now;
    try {
      for (let i = 0; i < 3; i++) expect((await v.post('/console/sign-in/two-factor', { code: '12345' })).status).toBe(401);
      const slowed = await v.post('/console/sign-in/two-factor', { code: '123456' });
      expect(slowed.status).toBe(429);
      expect(slowed.headers.get('retry-after')).toBe('1');
    } finally {
      t.server.app.now = () => Date.now();
    }
    expect((await visitor(t).post('/console/sign-in/two-factor', { code: '123456' })).headers.get('location')).toBe('/console/sign-in');
    // A sign-in waits five minutes for its code; housekeeping then forgets it, and its cookie opens nothing.
    expect(await purgeExpiredChallenges(t.server.app.db, Date.now() + 5 * 60_000)).toBeGreaterThanOrEqual(1);
    expect((await v.post('/console/sign-in/two-factor', { code: '123456' })).headers.get('location')).toBe('/console/sign-in');
  });

  it('an owner requires it (after setting it up); a member without it reaches only their account page until they set it up', async () => {
    const orgId = await t.createOrg();
    await addMember(t, orgId, 'boss@factor.example', PASSWORD, 'owner');
    await addMember(t, orgId, 'staff@factor.example');
    const { member: owner, csrf } = await signedIn('boss@factor.example');
    const early = await owner.post('/console/members/require-two-factor', { csrf_token: csrf, required: 'on' });
    expect(early.status).toBe(409);
    const { secret } = await enroll(owner, csrf);
    expect((await owner.post('/console/members/require-two-factor', { csrf_token: csrf, required: 'on' })).status).toBe(303);
    expect((await t.server.app.db('organizations').where({ id: orgId }).first()).require_two_factor).toBe(true);
    // Required: the owner cannot turn their own off.
    expect((await owner.post('/console/account/two-factor/disable', { csrf_token: csrf })).status).toBe(409);
    expect(secret).toBeTruthy();

    const { member: staff, csrf: staffCsrf } = await signedIn('staff@factor.example');
    const keys = await staff.get('/console/keys');
    expect(keys.status).toBe(303);
    expect(keys.headers.get('location')).toBe('/console/account');
    expect(await (await staff.get('/console/account')).text()).toContain('Your organization requires two-factor sign-in');
    expect((await staff.post('/console/keys', { csrf_token: staffCsrf, mode: 'test', scopes: 'translate' })).status).toBe(403);
    await enroll(staff, staffCsrf);
    expect((await staff.get('/console/keys')).status).toBe(200);
  });
});
