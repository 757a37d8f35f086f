// API keys: the keys of the mode in view, a form to create one (mode and scopes), the new key's secret
// shown once with a copy button, and revoke.
import { ALL_SCOPES, type Mode, type Scope } from '../../auth/principal.js';
import type { ApiKeyInfo, CreatedApiKey } from '../../auth/apiKeys.js';
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

export function keysPage(view: ConsoleView, keys: ApiKeyInfo[], outcome: { created?: CreatedApiKey; error?: string } = {}): string {
  const admin = hasRole(view.member, 'admin');
  const rows = keys
    .filter((key) => key.mode === view.mode)
    .map((key) => [
      `<code>${key.id}</code>`,
      scopeList(key.scopes),
      timeOf(key.created_at),
      timeOf(key.last_used_at),
      key.revoked_at
        ? `Revoked ${timeOf(key.revoked_at)}`
        : admin
          ? confirmForm(view.member, {
              url: `/console/keys/${encodeURIComponent(key.id)}/revoke`,
              summary: 'Revoke…',
              question: `Revoke ${key.id}? Every request and event stream with it is refused from now on; this cannot be undone.`,
              button: 'Revoke',
              label: `Revoke ${key.id}`,
            })
          : '',
    ]);
  return consolePage(
    view,
    'API keys',
    `${outcome.created ? newKeyBox(outcome.created) : ''}
${table(`${view.mode} API keys`, ['Key', 'Scopes', 'Created', 'Last used', ''], rows, `No ${view.mode} keys yet.`)}
${admin ? createForm(view, outcome.error) : ''}`,
  );
}
