// Members and roles in chromium on a 390 px phone, by the page's labels and roles: an owner invites a
// member by a link they copy, the invited person joins and signs in as a viewer (reads only), then as an
// admin; every form reloaded makes nothing twice; a member disabled in another tab is signed out on the
// next click. Each page is checked with axe-core (no serious or critical violation) and fits the screen.
import * as OTPAuth from 'otpauth';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendName } from '../support/databases.js';
import { launchChromium, phonePageProblems, recordCspViolations } from '../support/browser.js';
import { addMember, PASSWORD } from '../support/consoleVisitor.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/testServer.js';

const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const OWNER = 'owner@team.example';
const INVITED = 'new.colleague@team.example';
const INVITED_PASSWORD = 'colleague-password-Zq8#';

describe(`console members in chromium (${backendName})`, () => {
  let t: TestServer;
  let browser: Browser;
  let orgId: string;
  beforeAll(async () => {
    t = await startTestServer();
    orgId = await t.createOrg({ name: 'Team Org', balance: 10 });
    await addMember(t, orgId, OWNER, PASSWORD, 'owner');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  async function phone(): Promise<{ context: BrowserContext; page: Page; blocked: string[] }> {
    const context = await browser.newContext({ ...PHONE, permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    return { context, page, blocked: recordCspViolations(page) };
  }

  async function signIn(page: Page, email: string, password: string, path = '/console'): Promise<void> {
    await page.goto(`${t.url}${path}`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await Promise.all([page.waitForURL(`${t.url}${path}`), page.getByRole('button', { name: 'Sign in' }).press('Enter')]);
  }

  /** Fits the phone and passes axe-core. */
  const wellFormed = async (page: Page) => expect(await phonePageProblems(page, PHONE.viewport.width), page.url()).toEqual([]);

  /** Sends a form (by `act` on its button) and waits for the page it loads, which may have the same URL. */
  const submit = async (page: Page, act: Promise<void>) => {
    await Promise.all([page.waitForEvent('load'), act]);
  };

  /** Reloads the page a form led to: a GET, so nothing is made again. */
  const reload = async (page: Page) => {
    const methods: string[] = [];
    page.on('request', (request) => methods.push(request.method()));
    await page.reload();
    expect(methods[0]).toBe('GET');
  };

  it('invites a member by a copied link; they join, read as a viewer, change data as an admin; reloads repeat nothing', async () => {
    const owner = await phone();
    await signIn(owner.page, OWNER, PASSWORD, '/console/members');
    await wellFormed(owner.page);

    // Invite by keyboard: the link is shown once, copied, and a reload neither shows it again nor invites twice.
    await owner.page.getByLabel('Email').fill(INVITED);
    await owner.page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await submit(owner.page, owner.page.getByRole('button', { name: 'Make invitation link' }).press('Enter'));
    const link = (await owner.page.locator('#new-link').textContent())!;
    expect(link).toMatch(/\/console\/link\/cml_/);
    await owner.page.getByRole('button', { name: 'Copy' }).tap();
    expect(await owner.page.evaluate(() => navigator.clipboard.readText())).toBe(link);
    await wellFormed(owner.page);
    await reload(owner.page);
    expect(await owner.page.locator('#new-link').count()).toBe(0);
    expect(await t.server.app.db('member_links').where({ org_id: orgId })).toHaveLength(1);

    // The invited person, in their own browser, chooses a password and signs in.
    const invited = await phone();
    await invited.page.goto(`${t.url}${new URL(link).pathname}`);
    expect(await invited.page.getByRole('heading', { level: 1 }).textContent()).toBe('Join Team Org');
    await wellFormed(invited.page);
    await invited.page.getByLabel('Choose a password').fill(INVITED_PASSWORD);
    await Promise.all([invited.page.waitForURL(/\/console\/sign-in/), invited.page.getByRole('button', { name: 'Join' }).tap()]);
    expect(await invited.page.getByLabel('Email').inputValue()).toBe(INVITED);
    await invited.page.getByLabel('Password').fill(INVITED_PASSWORD);
    await Promise.all([invited.page.waitForURL(`${t.url}/console`), invited.page.getByRole('button', { name: 'Sign in' }).tap()]);

    // A viewer reads every page and finds nothing that changes data.
    for (const [section, path] of [['API keys', '/console/keys'], ['Webhooks', '/console/webhooks'], ['Members', '/console/members'], ['Apps', '/console/apps']]) {
      await Promise.all([invited.page.waitForURL(`${t.url}${path}`), invited.page.getByRole('link', { name: section }).tap()]);
      await wellFormed(invited.page);
    }
    await invited.page.goto(`${t.url}/console/keys`);
    expect(await invited.page.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    await invited.page.goto(`${t.url}/console/members`);
    expect(await invited.page.getByRole('button', { name: 'Make invitation link' }).count()).toBe(0);

    // The owner makes them an admin: on their next page they may create a key; a reload does not make a second.
    await owner.page.reload();
    await owner.page.locator('tr', { hasText: INVITED }).getByLabel(`Role of ${INVITED}`, { exact: true }).selectOption('admin');
    await submit(owner.page, owner.page.getByRole('button', { name: `Change role of ${INVITED}` }).tap());
    expect(await owner.page.getByRole('status').last().textContent()).toBe(`${INVITED} is now an admin.`);
    await invited.page.goto(`${t.url}/console/keys`);
    await submit(invited.page, invited.page.getByRole('button', { name: 'Create key' }).tap());
    expect(await invited.page.locator('#new-key').textContent()).toMatch(/^spk_live_/);
    await wellFormed(invited.page);
    await reload(invited.page);
    expect(await invited.page.locator('#new-key').count()).toBe(0);
    expect(await t.server.app.db('api_keys').where({ org_id: orgId })).toHaveLength(1);

    expect(owner.blocked).toEqual([]);
    expect(invited.blocked).toEqual([]);
    await owner.context.close();
    await invited.context.close();
  });

  it('signs a member disabled in another tab out on their next click; removing asks first, naming what stops', async () => {
    const email = 'leaving@team.example';
    await addMember(t, orgId, email, PASSWORD, 'admin');
    const owner = await phone();
    await signIn(owner.page, OWNER, PASSWORD, '/console/members');
    const leaving = await phone();
    await signIn(leaving.page, email, PASSWORD, '/console/keys');

    const row = owner.page.locator('tr', { hasText: email });
    await row.getByText('Disable…').tap();
    expect(await row.textContent()).toContain('They are signed out everywhere at once');
    await wellFormed(owner.page);
    await submit(owner.page, row.getByRole('button', { name: `Disable ${email}` }).tap());
    expect(await owner.page.locator('tr', { hasText: email }).textContent()).toContain('Disabled');

    // Their open page's next click lands on the sign-in page, and the right password no longer opens the console.
    await Promise.all([leaving.page.waitForURL(/\/console\/sign-in/), leaving.page.getByRole('link', { name: 'Webhooks' }).tap()]);
    await leaving.page.getByLabel('Email').fill(email);
    await leaving.page.getByLabel('Password').fill(PASSWORD);
    await leaving.page.getByRole('button', { name: 'Sign in' }).tap();
    await expect.poll(() => leaving.page.getByRole('alert').textContent()).toBe('Wrong email or password.');

    const again = owner.page.locator('tr', { hasText: email });
    await again.getByText('Remove…').tap();
    expect(await again.textContent()).toContain('can no longer sign in. Apps they approved stay connected.');
    await submit(owner.page, again.getByRole('button', { name: `Remove ${email}` }).tap());
    expect(await owner.page.locator('tr', { hasText: email }).count()).toBe(0);
    await wellFormed(owner.page);

    // The owner's own account page: password change and sign out everywhere.
    await owner.page.getByRole('link', { name: 'Your account' }).tap();
    await owner.page.waitForURL(`${t.url}/console/account`);
    await wellFormed(owner.page);
    await owner.page.getByText('Sign out everywhere…').tap();
    await Promise.all([owner.page.waitForURL(/\/console\/sign-in/), owner.page.getByRole('button', { name: 'Sign out everywhere' }).tap()]);
    await wellFormed(owner.page);

    await owner.context.close();
    await leaving.context.close();
  });

  it('rolls a key with an overlap (both work until it ends), then revokes the new one after a confirmation', async () => {
    const owner = await phone();
    await signIn(owner.page, OWNER, PASSWORD, '/console/keys');
    await owner.page.getByLabel('Name').fill('Ticket sync');
    await owner.page.getByRole('radio', { name: 'Test' }).check();
    await submit(owner.page, owner.page.getByRole('button', { name: 'Create key' }).tap());
    const old = (await owner.page.locator('#new-key').textContent())!;
    const oldId = (await t.server.app.db('api_keys').where({ org_id: orgId, name: 'Ticket sync' }).first()).id;
    const row = owner.page.locator('tr', { hasText: oldId });
    expect(await row.textContent()).toContain(`…${old.slice(-4)}`);
    await wellFormed(owner.page);

    await row.getByText('Roll…').tap();
    await row.getByLabel('Old key stops').selectOption({ label: 'In 24 hours' });
    await wellFormed(owner.page);
    await submit(owner.page, row.getByRole('button', { name: `Roll ${oldId}` }).tap());
    const fresh = (await owner.page.locator('#new-key').textContent())!;
    expect(await owner.page.getByRole('status').last().textContent()).toContain(`${oldId} keeps working until`);
    const works = async (key: string) => (await fetch(`${t.url}/v1/account`, { headers: { Authorization: `Bearer ${key}` } })).status;
    expect([await works(old), await works(fresh)]).toEqual([200, 200]);
    await reload(owner.page);
    expect(await owner.page.locator('#new-key').count()).toBe(0);
    expect(await t.server.app.db('api_keys').where({ org_id: orgId, name: 'Ticket sync' })).toHaveLength(2);
    // The 24 hours over (the server's clock moved past them): the old key is refused, the new one goes on.
    const { expires_at } = await t.server.app.db('api_keys').where({ id: oldId }).first();
    t.server.app.now = () => new Date(expires_at).getTime() + 1000;
    try {
      expect([await works(old), await works(fresh)]).toEqual([401, 200]);
    } finally {
      t.server.app.now = Date.now;
    }

    const freshId = (await t.server.app.db('api_keys').where({ id: oldId }).first()).replaced_by;
    const freshRow = owner.page.locator('tr', { hasText: freshId });
    await freshRow.getByText('Revoke…').tap();
    expect(await freshRow.textContent()).toContain('Every request and event stream with it is refused');
    await submit(owner.page, freshRow.getByRole('button', { name: `Revoke ${freshId}` }).tap());
    expect(await owner.page.locator('tr', { hasText: freshId }).textContent()).toContain('Revoked');
    expect(await works(fresh)).toBe(401);
    await wellFormed(owner.page);
    await owner.context.close();
  });

  it('sets up two-factor sign-in by its QR code page, then signs in with a code', async () => {
    const email = 'careful@team.example';
    await addMember(t, orgId, email, PASSWORD, 'viewer');
    const { context, page } = await phone();
    await signIn(page, email, PASSWORD, '/console/account');
    await submit(page, page.getByRole('button', { name: 'Set up two-factor sign-in' }).tap());
    expect(await page.getByRole('img', { name: 'QR code of your two-factor secret' }).isVisible()).toBe(true);
    await wellFormed(page);
    const secret = OTPAuth.Secret.fromBase32((await page.locator('#totp-secret').textContent())!);
    await page.getByLabel('Code from the app').fill(OTPAuth.TOTP.generate({ secret }));
    await submit(page, page.getByRole('button', { name: 'Turn on' }).press('Enter'));
    expect(await page.locator('#recovery-codes').textContent()).toMatch(/^([0-9a-f]{5}-[0-9a-f]{5}\n){9}[0-9a-f]{5}-[0-9a-f]{5}$/);
    await wellFormed(page);
    await context.close();

    const again = await phone();
    await again.page.goto(`${t.url}/console/sign-in`);
    await again.page.getByLabel('Email').fill(email);
    await again.page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([again.page.waitForURL(/\/console\/sign-in\/two-factor$/), again.page.getByRole('button', { name: 'Sign in' }).tap()]);
    await wellFormed(again.page);
    await again.page.getByLabel('Authentication code').fill(OTPAuth.TOTP.generate({ secret, timestamp: Date.now() + 30_000 }));
    await Promise.all([again.page.waitForURL(`${t.url}/console`), again.page.getByRole('button', { name: 'Verify' }).tap()]);
    await again.context.close();
  });

  it("an owner turns the organization's transcripts off and on again from the overview by keyboard; a viewer sees the setting only", async () => {
    const owner = await phone();
    await signIn(owner.page, OWNER, PASSWORD);
    const setting = owner.page.getByRole('form', { name: 'Call transcripts' });
    expect(await setting.textContent()).toContain('New calls keep a transcript of what each side said and heard');
    await wellFormed(owner.page);
    await submit(owner.page, setting.getByRole('button', { name: 'Stop keeping transcripts' }).press('Enter'));
    expect(await owner.page.getByRole('status').last().textContent()).toBe('New calls keep no transcript from now on.');
    expect((await t.server.app.db('organizations').where({ id: orgId }).first()).transcripts).toBe(false);
    await wellFormed(owner.page);
    await reload(owner.page);
    expect(await owner.page.getByRole('status').count()).toBe(0);

    const email = 'auditor@team.example';
    await addMember(t, orgId, email, PASSWORD, 'viewer');
    const viewer = await phone();
    await signIn(viewer.page, email, PASSWORD);
    const readOnly = viewer.page.getByRole('region', { name: 'Call transcripts' });
    expect(await readOnly.textContent()).toContain('Owners and admins change this.');
    expect(await readOnly.getByRole('button').count()).toBe(0);
    await wellFormed(viewer.page);

    await submit(owner.page, owner.page.getByRole('button', { name: 'Keep transcripts' }).press('Enter'));
    expect((await t.server.app.db('organizations').where({ id: orgId }).first()).transcripts).toBe(true);
    await owner.context.close();
    await viewer.context.close();
  });

  it('a password reset link from the admin API opens a page to choose a new one', async () => {
    const id = (await (await fetch(`${t.url}/admin/orgs/${orgId}/members`, { headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).json())[0].id;
    const made = await fetch(`${t.url}/admin/orgs/${orgId}/members/${id}/password_reset`, { method: 'POST', headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    const { url } = await made.json();
    const { context, page } = await phone();
    await page.goto(`${t.url}${new URL(url).pathname}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Choose a new password');
    await wellFormed(page);
    await page.getByLabel('New password').fill('owner-new-password-42');
    await Promise.all([page.waitForURL(/\/console\/sign-in/), page.getByRole('button', { name: 'Set password' }).tap()]);
    await page.goto(`${t.url}${new URL(url).pathname}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This link does not open');
    await wellFormed(page);
    await context.close();
  });
});
