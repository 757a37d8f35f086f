// The public endpoints of one call or chat, with the key from the page's fragment in its header
// (`X-Call-Key`, `X-Chat-Key`): the key never travels in a URL. Shared by the call and chat pages.

/** The key in the fragment (`#k=<key>`), '' when there is none. */
export const keyFromFragment = () => (new URLSearchParams(location.hash.replace(/^#/, '')).get('k') || '').trim();

/** The path segment after `/<page>/` (`/chat/ses_1` -> `ses_1`), '' when missing or malformed. */
export function idFromPath(page) {
  const parts = location.pathname.split('/').filter(Boolean);
  const at = parts.indexOf(page);
  try {
    return at >= 0 && parts[at + 1] ? decodeURIComponent(parts[at + 1]) : '';
  } catch {
    return '';
  }
}

/**
 * `request(path, { method, json, body })` resolves to `{ status, ok, data }` for every HTTP answer
 * (data: the parsed JSON body or null) and rejects only when the server could not be reached;
 * `fetchRaw(path, init)` is fetch with the key header, for bodies that are not JSON.
 */
export function publicApi(base, keyHeader, key) {
  const withKey = (headers = {}) => ({ [keyHeader]: key, ...headers });
  const fetchRaw = (path, init = {}) => fetch(base + path, { cache: 'no-store', ...init, headers: withKey(init.headers) });
  async function request(path, options = {}) {
    const init = { method: options.method || 'GET', headers: { Accept: 'application/json' } };
    if (options.json !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(options.json);
    } else if (options.body !== undefined) {
      init.body = options.body;
    }
    const response = await fetchRaw(path, init);
    const json = (response.headers.get('Content-Type') || '').includes('json');
    const data = json ? await response.json().catch(() => null) : null;
    return { status: response.status, ok: response.ok, data };
  }
  return { request, fetchRaw, withKey };
}
