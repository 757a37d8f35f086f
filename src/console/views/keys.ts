// API keys: the keys of the mode in view, a form to create one (mode and scopes), the new key's secret
// shown once with a copy button, and revoke.
import { ALL_SCOPES, type Mode, type Scope } from '../../auth/principal.js';
import { KEY_NAME_MAX_LENGTH, ROLL_OVERLAPS_MS, type ApiKeyInfo, type CreatedApiKey } from '../../auth/apiKeys.js';
import { escapeHtml } from '../../web/html.js';
import { SCOPE_WORDS } from '../../web/scopeWords.js';
import { confirmForm, consolePage, csrfField, table, timeOf, type ConsoleView } from '../layout.js';
import { hasRole } from '../session.js';

const scopeList = (scopes: Scope[]) =>
  scopes.length === ALL_SCOPES.length ? 'all' : scopes.map((s) => `<code title="${escapeHtml(SCOPE_WORDS[s])}">${s}</code>`).join(' ');

function createForm(view: ConsoleView, error?: string): string {
  const modes = (['live', 'test'] as Mode[])
    .map(
      (mode) =>
        `<label class="choice"><input type="radio" name="mode" value="${mode}"${mode === view.mode ? ' checked' : ''}> ${mode === 'live' ? 'Live' : 'Test'}</label>`,
    )
    .join('');
  const scopes = ALL_SCOPES.map(
    (scope) =>
      `<label class="choice"><input type="checkbox" name="scopes" value="${scope}" checked> <code>${scope}</code> <span class="muted">${escapeHtml(SCOPE_WORDS[scope])}</span></label>`,
  ).join('');
  return `<form class="panel" method="post" action="/console/keys">
<h3>Create a key</h3>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}${csrfField(view.member)}
<label for="key-name">Name <span class="muted">(optional: what it is for)</span></label>
<input id="key-name" name="name" type="text" maxlength="${KEY_NAME_MAX_LENGTH}">
<fieldset><legend>Mode</legend>${modes}</fieldset>
<fieldset><legend>Scopes</legend>${scopes}</fieldset>
<button type="submit">Create key</button>
</form>`;
}

/** The secret of a key just made: shown this once, never stored in the clear. */
const newKeyBox = (created: CreatedApiKey) => `<section class="secret" aria-labelledby="new-key-title">
<h3 id="new-key-title">Your new ${created.mode} key</h3>
<p>Copy it now: it is not shown again.</p>
<p><code id="new-key" class="key">${escapeHtml(created.key)}</code></p>
<button type="button" data-copy="new-key">Copy</button>
</section>`;

const OVERLAP_WORDS: Record<number, string> = {
  0: 'Now: the old key stops at once',
  3600_000: 'In 1 hour',
  [24 * 3600_000]: 'In 24 hours',
  [7 * 24 * 3600_000]: 'In 7 days',
};

/** Roll: a new key in place of this one, the old one working for the overlap chosen. */
function rollForm(view: ConsoleView, key: ApiKeyInfo): string {
  const id = `overlap-${escapeHtml(key.id)}`;
  const options = ROLL_OVERLAPS_MS.map((ms) => `<option value="${ms / 1000}"${ms === 3600_000 ? ' selected' : ''}>${OVERLAP_WORDS[ms]}</option>`).join('');
  return `<details class="confirm"><summary>Roll…</summary>
<form method="post" action="/console/keys/${encodeURIComponent(key.id)}/roll">${csrfField(view.member)}
<p>Make a new key with the same scopes? The old key keeps working until the time chosen, then every request with it is refused.</p>
<label for="${id}">Old key stops</label>
<select id="${id}" name="overlap_seconds">${options}</select>
<button type="submit" class="danger" aria-label="Roll ${escapeHtml(key.id)}">Roll</button>
</form></details>`;
}

/** A key's state: working, working until the end a roll gave it, ended, or revoked. */
function stateOf(view: ConsoleView, key: ApiKeyInfo, admin: boolean, nowMs: number): string {
  if (key.revoked_at) return `Revoked ${timeOf(key.revoked_at)}`;
  if (key.expires_at && Date.parse(key.expires_at) <= nowMs) return `Expired ${timeOf(key.expires_at)}`;
  const until = key.expires_at ? `<p>Works until ${timeOf(key.expires_at)}</p>` : '';
  if (!admin) return until || 'Active';
  const revoke = confirmForm(view.member, {
    url: `/console/keys/${encodeURIComponent(key.id)}/revoke`,
    summary: 'Revoke…',
    question: `Revoke ${key.id}? Every request and event stream with it is refused from now on; this cannot be undone.`,
    button: 'Revoke',
    label: `Revoke ${key.id}`,
  });
  return `${until}<div class="actions">${key.expires_at ? '' : rollForm(view, key)}${revoke}</div>`;
}

export function keysPage(view: ConsoleView, keys: ApiKeyInfo[], outcome: { created?: CreatedApiKey; error?: string } = {}): string {
  const admin = hasRole(view.member, 'admin');
  const nowMs = Date.now();
  const rows = keys
    .filter((key) => key.mode === view.mode)
    .map((key) => [
      `${key.name ? `<strong>${escapeHtml(key.name)}</strong><br>` : ''}<code>${key.id}</code>${key.last_four ? `<br><code class="muted">…${escapeHtml(key.last_four)}</code>` : ''}`,
      scopeList(key.scopes),
      `${timeOf(key.created_at)}${key.created_by ? `<br><span class="muted">by ${escapeHtml(key.created_by)}</span>` : ''}`,
      timeOf(key.last_used_at),
      stateOf(view, key, admin, nowMs),
    ]);
  return consolePage(
    view,
    'API keys',
    `${outcome.created ? newKeyBox(outcome.created) : ''}
${table(`${view.mode} API keys`, ['Key', 'Scopes', 'Created', 'Last used', ''], rows, `No ${view.mode} keys yet.`)}
${admin ? createForm(view, outcome.error) : ''}`,
  );
}
