// Every console form is post/redirect/get: for each POST route of the console (enumerated from the
// server's Express routers, so a new form without a row here fails), a valid submission answers 303 to
// a path of this site, that page opens (200, or 303 to sign-in once the form ended the session), the
// form's effect is stored exactly once, and a reload of the page changes no row of the organization.
// What a form shows once (a key, a webhook secret, a link, recovery codes) is on the page after the
// redirect and not on the reload.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type express from 'express';
import { createApp } from '../../src/app/expressApp.js';
import { createInvitation, LINK_PATH } from '../../src/members/links.js';
import { confirmEnrollment, pendingEnrollment, startEnrollment } from '../../src/members/twoFactor.js';
import { backendName } from '../support/databases.js';
import { addMember, csrfOf, PASSWORD, visitor, type Visitor } from '../support/consoleVisitor.js';
import { startTestServer, type TestServer } from '../support/testServer.js';
import { codeAt } from '../support/totp.js';
import { Receiver } from '../support/webhookReceiver.js';

type Row = Record<string, unknown>;
/** The organization's rows in every table a console form changes (columns a mere page view touches left out). */
type Rows = Record<string, Row[]>;

/** A signed-in owner of a new organization. */
interface Owner {
  orgId: string;
  id: string;
  email: string;
  v: Visitor;
  csrf: string;
}

interface Submission {
  /** Who sent the form (and follows its redirect): the owner unless the form is a stranger's (sign-in, a link). */
  by?: Visitor;
  send: () => Promise<Response>;
  /** The stored effect, from the organization's rows before the form and after its page (and `settle`). */
  effect: (before: Rows, after: Rows) => void;
  /** Work the form set off that finishes after its page (a resent delivery's attempt): waited for. */
  settle?: () => Promise<void>;
  /** What the page after the redirect shows once. */
  shownOnce?: RegExp;
}

interface FormCase {
  /** The route as the router declares it. */
  route: string;
  /** The form ends the session it was sent from: its page may send to sign-in. */
  endsSession?: boolean;
  submit: (owner: Owner) => Promise<Submission>;
}

const NEW_PASSWORD = 'another-console-password-Vb4!';
const SAME_ORIGIN_PATH = /^\/(?![/\\])[^\s\\]*$/;

/** The POST routes of an Express app under `/console`, with the paths of the routers they are mounted on. */
function consolePostRoutes(app: express.Express): string[] {
  type Layer = { route?: { path: string; methods: Record<string, boolean> }; handle: { stack?: Layer[] }; rawPath?: string; slash?: boolean };
  const walk = (stack: Layer[], prefix: string): string[] =>
    stack.flatMap((layer) => {
      if (layer.route) return layer.route.methods.post ? [prefix + layer.route.path] : [];
      if (!layer.handle.stack) return [];
      return walk(layer.handle.stack, prefix + (layer.slash || !layer.rawPath ? '' : layer.rawPath));
    });
  return walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '').filter((path) => path.startsWith('/console'));
}

describe(`every console form is post/redirect/get (${backendName})`, () => {
  let t: TestServer;
  let receiver: Receiver;
  let count = 0;

  beforeAll(async () => {
    [t, receiver] = await Promise.all([startTestServer({ WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' }), Receiver.start()]);
  });
  afterAll(async () => {
    await Promise.all([t?.stop(), receiver?.close()]);
  });

  const db = () => t.server.app.db;
  const unique = (name: string) => `${name}-${++count}@forms.example`;

  const rowsOf = async (orgId: string): Promise<Rows> => {
    const members = db()('members').where({ org_id: orgId }).select('id');
    const sessions = db()('member_sessions').whereIn('member_id', members).select('id');
    const endpoints = db()('webhook_endpoints').where({ org_id: orgId }).select('id');
    const deliveries = db()('webhook_deliveries').whereIn('endpoint_id', endpoints).select('id');
    const connections = db()('oauth_connections').where({ org_id: orgId }).select('id');
    const without = (rows: Row[], ...columns: string[]) => rows.map((row) => Object.fromEntries(Object.entries(row).filter(([name]) => !columns.includes(name))));
    return {
      organizations: await db()('organizations').where({ id: orgId }),
      members: await db()('members').where({ org_id: orgId }).orderBy('id'),
      member_sessions: without(await db()('member_sessions').whereIn('member_id', members).orderBy('id'), 'last_seen_at'),
      console_flashes: await db()('console_flashes').whereIn('session_id', sessions).orderBy('id'),
      member_links: await db()('member_links').where({ org_id: orgId }).orderBy('id'),
      member_recovery_codes: await db()('member_recovery_codes').whereIn('member_id', members).orderBy('id'),
      member_sign_in_challenges: await db()('member_sign_in_challenges').whereIn('member_id', members).orderBy('id'),
      api_keys: without(await db()('api_keys').where({ org_id: orgId }).orderBy('id'), 'last_used_at'),
      oauth_connections: await db()('oauth_connections').where({ org_id: orgId }).orderBy('id'),
      oauth_tokens: await db()('oauth_tokens').whereIn('connection_id', connections).orderBy('token_hash'),
      webhook_endpoints: await db()('webhook_endpoints').where({ org_id: orgId }).orderBy('id'),
      webhook_deliveries: await db()('webhook_deliveries').whereIn('endpoint_id', endpoints).orderBy('id'),
      webhook_attempts: await db()('webhook_attempts').whereIn('delivery_id', deliveries).orderBy('id'),
      events: await db()('events').where({ org_id: orgId }).orderBy('seq'),
    };
  };

  const signedInOwner = async (): Promise<Owner> => {
    const orgId = await t.createOrg({ name: 'Forms Org', balance: 5 });
    const email = unique('owner');
    const id = await addMember(t, orgId, email, PASSWORD, 'owner');
    const v = visitor(t);
    expect((await v.signIn(email, PASSWORD)).status).toBe(303);
    return { orgId, id, email, v, csrf: csrfOf(await (await v.get('/console/account')).text()) };
  };
  /** Two-factor sign-in set up for `memberId` (as the account page would); its secret. */
  const enrolled = async (memberId: string) => {
    const app = t.server.app;
    await startEnrollment(app, memberId);
    const { secret } = (await pendingEnrollment(app, memberId))!;
    await confirmEnrollment(app, memberId, codeAt(secret), app.now());
    return secret;
  };
  /** A live endpoint added with the console's own form (its page opened, so nothing is left to show). */
  const endpointOf = async (o: Owner, url = receiver.url) => {
    const added = await o.v.follow(await o.v.post('/console/webhooks', { csrf_token: o.csrf, mode: 'live', url, description: '', events_scope: 'all' }));
    expect(added.status).toBe(200);
    const [row] = await db()('webhook_endpoints').where({ org_id: o.orgId, url }).orderBy('created_at', 'desc');
    return row.id as string;
  };
  const memberOf = (rows: Rows, id: string) => rows.members.find((m) => m.id === id);
  const sessionsOf = (rows: Rows, memberId: string) => rows.member_sessions.filter((s) => s.member_id === memberId);
  const post = (o: Owner, path: string, form: Record<string, string> = {}) => () => o.v.post(path, { csrf_token: o.csrf, ...form });

  const CASES: FormCase[] = [
    {
      route: '/console/sign-in',
      async submit(o) {
        const email = unique('signer');
        const id = await addMember(t, o.orgId, email, PASSWORD, 'viewer');
        const by = visitor(t);
        return {
          by,
          send: () => by.signIn(email, PASSWORD),
          effect: (before, after) => {
            expect(sessionsOf(before, id)).toHaveLength(0);
            expect(sessionsOf(after, id)).toHaveLength(1);
          },
        };
      },
    },
    {
      route: '/console/sign-in/two-factor',
      async submit(o) {
        const email = unique('second-factor');
        const id = await addMember(t, o.orgId, email, PASSWORD, 'viewer');
        const secret = await enrolled(id);
        const by = visitor(t);
        const first = await by.signIn(email, PASSWORD);
        expect(first.headers.get('location')).toBe('/console/sign-in/two-factor');
        return {
          by,
          // The code that turned it on was for this step: a newer one.
          send: () => by.post('/console/sign-in/two-factor', { code: codeAt(secret, Date.now() + 30_000) }),
          effect: (before, after) => {
            expect(before.member_sign_in_challenges.filter((c) => c.member_id === id)).toHaveLength(1);
            expect(after.member_sign_in_challenges.filter((c) => c.member_id === id)).toHaveLength(0);
            expect(sessionsOf(after, id)).toHaveLength(1);
          },
        };
      },
    },
    {
      route: '/console/sign-out',
      endsSession: true,
      submit: async (o) => ({
        send: post(o, '/console/sign-out'),
        effect: (before, after) => {
          expect(sessionsOf(before, o.id)).toHaveLength(1);
          expect(sessionsOf(after, o.id)).toHaveLength(0);
        },
      }),
    },
    {
      route: '/console/link/:token',
      async submit(o) {
        const email = unique('invited');
        const made = await createInvitation(db(), t.server.app.config.publicBaseUrl, o.orgId, { email, role: 'viewer', createdBy: o.id }, t.server.app.now());
        const token = new URL(made.url).pathname.slice(LINK_PATH.length);
        const by = visitor(t);
        return {
          by,
          send: () => by.post(`${LINK_PATH}${token}`, { new_password: PASSWORD }),
          effect: (before, after) => {
            expect(after.members.filter((m) => m.email === email)).toHaveLength(1);
            expect(after.members).toHaveLength(before.members.length + 1);
            expect(after.member_links.find((l) => l.email === email)!.used_at).not.toBeNull();
          },
        };
      },
    },
    {
      route: '/console/settings/transcripts',
      submit: async (o) => ({
        send: post(o, '/console/settings/transcripts', { transcripts: 'off' }),
        effect: (before, after) => {
          expect(before.organizations[0]!.transcripts).toBe(true);
          expect(after.organizations[0]!.transcripts).toBe(false);
        },
      }),
    },
    {
      route: '/console/keys',
      submit: async (o) => ({
        send: post(o, '/console/keys', { mode: 'live', scopes: 'translate', name: 'forms' }),
        effect: (before, after) => expect(after.api_keys).toHaveLength(before.api_keys.length + 1),
        shownOnce: /<code id="new-key" class="key">/,
      }),
    },
    {
      route: '/console/keys/:keyId/revoke',
      async submit(o) {
        const { id } = await t.createKey(o.orgId, 'live');
        return {
          send: post(o, `/console/keys/${id}/revoke`),
          effect: (before, after) => {
            expect(before.api_keys.find((k) => k.id === id)!.revoked_at).toBeNull();
            expect(after.api_keys.find((k) => k.id === id)!.revoked_at).not.toBeNull();
            expect(after.api_keys).toHaveLength(before.api_keys.length);
          },
        };
      },
    },
    {
      route: '/console/keys/:keyId/roll',
      async submit(o) {
        const { id } = await t.createKey(o.orgId, 'live');
        return {
          send: post(o, `/console/keys/${id}/roll`, { overlap_seconds: '0' }),
          effect: (before, after) => {
            expect(after.api_keys).toHaveLength(before.api_keys.length + 1);
            expect(after.api_keys.find((k) => k.id === id)!.revoked_at).not.toBeNull();
          },
          shownOnce: /<code id="new-key" class="key">/,
        };
      },
    },
    {
      route: '/console/apps/:connectionId/revoke',
      async submit(o) {
        const clientId = `app_forms_${count}`;
        await db()('oauth_apps').insert({ client_id: clientId, name: 'Forms App', client_type: 'public', redirect_uris: ['https://x.example/cb'], scopes: ['account:read'] });
        const id = `conn_forms_${count}`;
        await db()('oauth_connections').insert({ id, org_id: o.orgId, client_id: clientId, scopes: ['account:read'], activated_at: new Date() });
        return {
          send: post(o, `/console/apps/${id}/revoke`),
          effect: (before, after) => {
            expect(before.oauth_connections.find((c) => c.id === id)!.revoked_at).toBeNull();
            expect(after.oauth_connections.find((c) => c.id === id)!.revoked_at).not.toBeNull();
          },
        };
      },
    },
    {
      route: '/console/webhooks',
      submit: async (o) => ({
        send: post(o, '/console/webhooks', { mode: 'live', url: receiver.url, description: 'forms', events_scope: 'all' }),
        effect: (before, after) => expect(after.webhook_endpoints).toHaveLength(before.webhook_endpoints.length + 1),
        shownOnce: /<code id="new-secret" class="key">/,
      }),
    },
    {
      route: '/console/webhooks/:endpointId/disable',
      async submit(o) {
        const id = await endpointOf(o);
        return {
          send: post(o, `/console/webhooks/${id}/disable`, { mode: 'live' }),
          effect: (before, after) => {
            expect(before.webhook_endpoints.find((e) => e.id === id)!.disabled_at).toBeNull();
            expect(after.webhook_endpoints.find((e) => e.id === id)!.disabled_at).not.toBeNull();
          },
        };
      },
    },
    {
      route: '/console/webhooks/:endpointId/enable',
      async submit(o) {
        const id = await endpointOf(o);
        await db()('webhook_endpoints').where({ id }).update({ disabled_at: new Date() });
        return {
          send: post(o, `/console/webhooks/${id}/enable`, { mode: 'live' }),
          effect: (_before, after) => expect(after.webhook_endpoints.find((e) => e.id === id)!.disabled_at).toBeNull(),
        };
      },
    },
    {
      route: '/console/webhooks/:endpointId/rotate',
      async submit(o) {
        const id = await endpointOf(o);
        return {
          send: post(o, `/console/webhooks/${id}/rotate`, { mode: 'live', overlap_seconds: '3600' }),
          effect: (before, after) => {
            const was = before.webhook_endpoints.find((e) => e.id === id)!;
            const now = after.webhook_endpoints.find((e) => e.id === id)!;
            expect(now.secret_sealed).not.toBe(was.secret_sealed);
            expect(now.previous_secret_sealed).toBe(was.secret_sealed);
          },
          shownOnce: /<code id="new-secret" class="key">/,
        };
      },
    },
    {
      route: '/console/webhooks/:endpointId/delete',
      async submit(o) {
        const id = await endpointOf(o);
        return {
          send: post(o, `/console/webhooks/${id}/delete`, { mode: 'live' }),
          effect: (before, after) => {
            expect(before.webhook_endpoints.map((e) => e.id)).toContain(id);
            expect(after.webhook_endpoints.map((e) => e.id)).not.toContain(id);
          },
        };
      },
    },
    {
      route: '/console/webhooks/:endpointId/deliveries/:deliveryId/resend',
      async submit(o) {
        const id = await endpointOf(o);
        // A real event, delivered once.
        const sent = receiver.received.length;
        const { key } = await t.createKey(o.orgId, 'live');
        const session = await fetch(`${t.url}/v1/sessions`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ agent_language: 'en', customer_language: 'de' }),
        });
        expect(session.status).toBe(201);
        await receiver.until(sent + 1);
        // The pass that sent it has recorded its attempt once the next pass has run.
        await t.server.app.webhooks.tick();
        const delivery = await db()('webhook_deliveries').where({ endpoint_id: id }).first();
        expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 1 });
        return {
          send: post(o, `/console/webhooks/${id}/deliveries/${delivery.id}/resend`, { mode: 'live' }),
          settle: async () => {
            await receiver.until(sent + 2);
            await t.server.app.webhooks.tick();
          },
          effect: (_before, after) => {
            expect(after.webhook_deliveries.find((d) => d.id === delivery.id)).toMatchObject({ status: 'succeeded', attempt_count: 2 });
            expect(after.webhook_attempts.filter((a) => a.delivery_id === delivery.id)).toHaveLength(2);
            expect(receiver.received.slice(sent).map((r) => r.headers['webhook-id'])).toEqual([delivery.id, delivery.id]);
          },
        };
      },
    },
    {
      route: '/console/members/invite',
      async submit(o) {
        const email = unique('invitee');
        return {
          send: post(o, '/console/members/invite', { email, role: 'viewer' }),
          effect: (before, after) => {
            expect(after.member_links).toHaveLength(before.member_links.length + 1);
            expect(after.member_links.filter((l) => l.email === email && l.kind === 'invitation')).toHaveLength(1);
          },
          shownOnce: /<code id="new-link" class="key">/,
        };
      },
    },
    {
      route: '/console/members/:memberId/role',
      async submit(o) {
        const id = await addMember(t, o.orgId, unique('role'), PASSWORD, 'admin');
        return {
          send: post(o, `/console/members/${id}/role`, { role: 'viewer' }),
          effect: (before, after) => {
            expect(memberOf(before, id)!.role).toBe('admin');
            expect(memberOf(after, id)!.role).toBe('viewer');
          },
        };
      },
    },
    {
      route: '/console/members/:memberId/disable',
      async submit(o) {
        const id = await addMember(t, o.orgId, unique('disabled'), PASSWORD, 'admin');
        return {
          send: post(o, `/console/members/${id}/disable`),
          effect: (before, after) => {
            expect(memberOf(before, id)!.disabled_at).toBeNull();
            expect(memberOf(after, id)!.disabled_at).not.toBeNull();
          },
        };
      },
    },
    {
      route: '/console/members/:memberId/enable',
      async submit(o) {
        const id = await addMember(t, o.orgId, unique('enabled'), PASSWORD, 'admin');
        await db()('members').where({ id }).update({ disabled_at: new Date() });
        return {
          send: post(o, `/console/members/${id}/enable`),
          effect: (_before, after) => expect(memberOf(after, id)!.disabled_at).toBeNull(),
        };
      },
    },
    {
      route: '/console/members/:memberId/remove',
      async submit(o) {
        const id = await addMember(t, o.orgId, unique('removed'), PASSWORD, 'admin');
        return {
          send: post(o, `/console/members/${id}/remove`),
          effect: (before, after) => {
            expect(after.members).toHaveLength(before.members.length - 1);
            expect(memberOf(after, id)).toBeUndefined();
          },
        };
      },
    },
    {
      route: '/console/members/:memberId/password_reset',
      async submit(o) {
        const id = await addMember(t, o.orgId, unique('reset'), PASSWORD, 'admin');
        return {
          send: post(o, `/console/members/${id}/password_reset`),
          effect: (before, after) => {
            expect(after.member_links).toHaveLength(before.member_links.length + 1);
            expect(after.member_links.filter((l) => l.member_id === id && l.kind === 'password_reset')).toHaveLength(1);
          },
          shownOnce: /<code id="new-link" class="key">/,
        };
      },
    },
    {
      route: '/console/members/require-two-factor',
      async submit(o) {
        await enrolled(o.id);
        return {
          send: post(o, '/console/members/require-two-factor', { required: 'on' }),
          effect: (before, after) => {
            expect(before.organizations[0]!.require_two_factor).toBe(false);
            expect(after.organizations[0]!.require_two_factor).toBe(true);
          },
        };
      },
    },
    {
      route: '/console/account/two-factor/start',
      submit: async (o) => ({
        send: post(o, '/console/account/two-factor/start'),
        effect: (before, after) => {
          expect(memberOf(before, o.id)!.totp_secret_sealed).toBeNull();
          expect(memberOf(after, o.id)).toMatchObject({ totp_secret_sealed: expect.any(String), totp_enabled_at: null });
        },
      }),
    },
    {
      route: '/console/account/two-factor/confirm',
      async submit(o) {
        await startEnrollment(t.server.app, o.id);
        const { secret } = (await pendingEnrollment(t.server.app, o.id))!;
        return {
          send: post(o, '/console/account/two-factor/confirm', { code: codeAt(secret) }),
          effect: (before, after) => {
            expect(memberOf(before, o.id)!.totp_enabled_at).toBeNull();
            expect(memberOf(after, o.id)!.totp_enabled_at).not.toBeNull();
            expect(after.member_recovery_codes.filter((c) => c.member_id === o.id)).toHaveLength(10);
          },
          shownOnce: /<pre id="recovery-codes" class="key">/,
        };
      },
    },
    {
      route: '/console/account/two-factor/disable',
      async submit(o) {
        await enrolled(o.id);
        return {
          send: post(o, '/console/account/two-factor/disable'),
          effect: (before, after) => {
            expect(memberOf(before, o.id)!.totp_enabled_at).not.toBeNull();
            expect(memberOf(after, o.id)).toMatchObject({ totp_enabled_at: null, totp_secret_sealed: null });
            expect(after.member_recovery_codes.filter((c) => c.member_id === o.id)).toHaveLength(0);
          },
        };
      },
    },
    {
      route: '/console/account/password',
      submit: async (o) => ({
        send: post(o, '/console/account/password', { current_password: PASSWORD, new_password: NEW_PASSWORD }),
        effect: (before, after) => {
          expect(memberOf(after, o.id)!.password_hash).not.toBe(memberOf(before, o.id)!.password_hash);
          // The session that changed it goes on.
          expect(sessionsOf(after, o.id)).toHaveLength(1);
        },
      }),
    },
    {
      route: '/console/account/sign-out-everywhere',
      endsSession: true,
      async submit(o) {
        // A second session of the owner's, elsewhere: ended too.
        expect((await visitor(t).signIn(o.email, PASSWORD)).status).toBe(303);
        return {
          send: post(o, '/console/account/sign-out-everywhere'),
          effect: (before, after) => {
            expect(sessionsOf(before, o.id)).toHaveLength(2);
            expect(sessionsOf(after, o.id)).toHaveLength(0);
          },
        };
      },
    },
    {
      route: '/console/mode',
      submit: async (o) => ({
        send: post(o, '/console/mode', { mode: 'test', return_to: '/console/keys' }),
        // The mode in view is the browser's (a cookie), not a row.
        effect: (before, after) => {
          expect(after).toEqual(before);
          expect(o.v.jar.cookies.get('console_mode')).toBe('test');
        },
      }),
    },
  ];

  it('has a row for every POST route of the console', () => {
    const routes = consolePostRoutes(createApp(t.server.app));
    expect(routes.length).toBeGreaterThan(0);
    expect([...routes].sort()).toEqual(CASES.map((c) => c.route).sort());
  });

  for (const form of CASES) {
    it(`${form.route}: 303 to a page of this site, the effect once, a reload changes nothing`, async () => {
      const owner = await signedInOwner();
      const submission = await form.submit(owner);
      const by = submission.by ?? owner.v;
      const before = await rowsOf(owner.orgId);

      const posted = await submission.send();
      expect(posted.status).toBe(303);
      const location = posted.headers.get('location')!;
      expect(location).toMatch(SAME_ORIGIN_PATH);

      const page = await by.get(location);
      const allowed = form.endsSession ? [200, 303] : [200];
      expect(allowed).toContain(page.status);
      if (page.status === 303) expect(page.headers.get('location')).toMatch(/^\/console\/sign-in(\?|$)/);
      const html = await page.text();
      await submission.settle?.();
      const after = await rowsOf(owner.orgId);
      submission.effect(before, after);

      // The reload: the same page again, no row changed, nothing shown once shown again.
      const reload = await by.get(location);
      expect(reload.status).toBe(page.status);
      const reloadHtml = await reload.text();
      expect(await rowsOf(owner.orgId)).toEqual(after);
      if (submission.shownOnce) {
        expect(html).toMatch(submission.shownOnce);
        expect(reloadHtml).not.toMatch(submission.shownOnce);
      }
    });
  }
});
