// A console visitor without a browser: a cookie jar, form posts, sign-in; and adding a member.
import { expect } from 'vitest';
import { TEST_ADMIN_TOKEN, type TestServer } from './testServer.js';

export const PASSWORD = 'console-password-Zq8#long';

/** A browser's cookie jar, reduced to what these tests need. */
export class Jar {
  readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (!value || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export interface Visitor {
  jar: Jar;
  get(path: string): Promise<Response>;
  post(path: string, form: Record<string, string>, headers?: Record<string, string>): Promise<Response>;
  /** Post/redirect/get: expects `res` to be a 303 and opens the page it names. */
  follow(res: Response): Promise<Response>;
  /** Opens the sign-in page and sends its form. */
  signIn(email: string, password: string, options?: { returnTo?: string; headers?: Record<string, string> }): Promise<Response>;
}

export function visitor(t: TestServer, baseHeaders: Record<string, string> = {}): Visitor {
  const jar = new Jar();
  const send = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${t.url}${path}`, {
      ...init,
      redirect: 'manual',
      headers: { ...baseHeaders, ...(jar.cookies.size ? { Cookie: jar.header() } : {}), ...(init.headers as Record<string, string>) },
    });
    jar.take(res);
    return res;
  };
  const v: Visitor = {
    jar,
    get: (path) => send(path),
    follow(res) {
      expect(res.status).toBe(303);
      return send(new URL(res.headers.get('location')!, t.url).pathname + new URL(res.headers.get('location')!, t.url).search);
    },
    post: (path, form, headers = {}) =>
      send(path, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form).toString() }),
    async signIn(email, password, options = {}) {
      const page = await v.get(`/console/sign-in${options.returnTo === undefined ? '' : `?return_to=${encodeURIComponent(options.returnTo)}`}`);
      const html = await page.text();
      const token = /name="csrf_token" value="([^"]*)"/.exec(html)?.[1] ?? '';
      const returnTo = /name="return_to" value="([^"]*)"/.exec(html)?.[1]?.replace(/&amp;/g, '&') ?? '';
      return v.post('/console/sign-in', { email, password, csrf_token: token, return_to: returnTo }, options.headers);
    },
  };
  return v;
}

export const csrfOf = (html: string) => /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;

/** Adds a member (role `admin` unless given); their id. */
export async function addMember(t: TestServer, orgId: string, email: string, password = PASSWORD, role?: 'owner' | 'admin' | 'viewer'): Promise<string> {
  const res = await fetch(`${t.url}/admin/orgs/${orgId}/members`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password, ...(role ? { role } : {}) }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}
