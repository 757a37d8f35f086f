// API keys: the keys of the mode in view, a form to create one (mode and scopes), the new key's secret
// shown once with a copy button, and revoke.
import { ALL_SCOPES, type Mode, type Scope } from '../../auth/principal.js';
import { KEY_NAME_MAX_LENGTH, ROLL_OVERLAPS_MS, type ApiKeyInfo, type CreatedApiKey } from '../../auth/apiKeys.js';
import { escapeHtml } from '../../web/html.js';
import { confirmForm, consolePage, csrfField, table, timeOf, wordsWithHtml, type ConsoleView } from '../layout.js';
import { hasRole } from '../session.js';

const scopeList = (view: ConsoleView, scopes: Scope[]) =>
  scopes.length === ALL_SCOPES.length
    ? escapeHtml(view.words.t('console.keys.allScopes'))
    : scopes.map((s) => `<code title="${escapeHtml(view.words.t(`console.scope.${s}`))}">${s}</code>`).join(' ');

function createForm(view: ConsoleView, error?: string): string {
  const { t } = view.words;
  const modes = (['live', 'test'] as Mode[])
    .map(
      (mode) =>
        `<label class="choice"><input type="radio" name="mode" value="${mode}"${mode === view.mode ? ' checked' : ''}> ${escapeHtml(t(mode === 'live' ? 'console.mode.live' : 'console.mode.test'))}</label>`,
    )
    .join('');
  const scopes = ALL_SCOPES.map(
    (scope) =>
      `<label class="choice"><input type="checkbox" name="scopes" value="${scope}" checked> <code>${scope}</code> <span class="muted">${escapeHtml(t(`console.scope.${scope}`))}</span></label>`,
  ).join('');
  return `<form class="panel" method="post" action="/console/keys">
<h3>${escapeHtml(t('console.keys.create'))}</h3>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}${csrfField(view.member)}
<label for="key-name">${escapeHtml(t('console.keys.name'))} <span class="muted">${escapeHtml(t('console.keys.nameHelp'))}</span></label>
<input id="key-name" name="name" type="text" maxlength="${KEY_NAME_MAX_LENGTH}">
<fieldset><legend>${escapeHtml(t('console.keys.mode'))}</legend>${modes}</fieldset>
<fieldset><legend>${escapeHtml(t('console.keys.scopes'))}</legend>${scopes}</fieldset>
<button type="submit">${escapeHtml(t('console.keys.createButton'))}</button>
</form>`;
}

/** The secret of a key just made: shown this once, never stored in the clear. */
const newKeyBox = (view: ConsoleView, created: CreatedApiKey) => `<section class="secret" aria-labelledby="new-key-title">
<h3 id="new-key-title">${escapeHtml(view.words.t(created.mode === 'live' ? 'console.keys.newLive' : 'console.keys.newTest'))}</h3>
<p>${escapeHtml(view.words.t('console.copyNow'))}</p>
<p><code id="new-key" class="key">${escapeHtml(created.key)}</code></p>
<button type="button" data-copy="new-key">${escapeHtml(view.words.t('console.copy'))}</button>
</section>`;

const OVERLAP_WORDS: Record<number, string> = {
  0: 'console.keys.overlapNow',
  3600_000: 'console.overlap.hour',
  [24 * 3600_000]: 'console.overlap.day',
  [7 * 24 * 3600_000]: 'console.overlap.week',
};

/** Roll: a new key in place of this one, the old one working for the overlap chosen. */
function rollForm(view: ConsoleView, key: ApiKeyInfo): string {
  const { t } = view.words;
  const id = `overlap-${escapeHtml(key.id)}`;
  const options = ROLL_OVERLAPS_MS.map((ms) => `<option value="${ms / 1000}"${ms === 3600_000 ? ' selected' : ''}>${escapeHtml(t(OVERLAP_WORDS[ms]))}</option>`).join('');
  return `<details class="confirm"><summary>${escapeHtml(t('console.keys.rollMore'))}</summary>
<form method="post" action="/console/keys/${encodeURIComponent(key.id)}/roll">${csrfField(view.member)}
<p>${escapeHtml(t('console.keys.rollQuestion'))}</p>
<label for="${id}">${escapeHtml(t('console.keys.oldStops'))}</label>
<select id="${id}" name="overlap_seconds">${options}</select>
<button type="submit" class="danger" aria-label="${escapeHtml(t('console.keys.rollLabel', { id: key.id }))}">${escapeHtml(t('console.keys.roll'))}</button>
</form></details>`;
}

/** A key's state: working, working until the end a roll gave it, ended, or revoked. */
function stateOf(view: ConsoleView, key: ApiKeyInfo, admin: boolean, nowMs: number): string {
  const { words } = view;
  const { t } = words;
  if (key.revoked_at) return wordsWithHtml(words, 'console.keys.revokedAt', { time: timeOf(words, key.revoked_at) });
  if (key.expires_at && Date.parse(key.expires_at) <= nowMs) return wordsWithHtml(words, 'console.keys.expiredAt', { time: timeOf(words, key.expires_at) });
  const until = key.expires_at ? `<p>${wordsWithHtml(words, 'console.keys.worksUntil', { time: timeOf(words, key.expires_at) })}</p>` : '';
  if (!admin) return until || escapeHtml(t('console.keys.active'));
  const revoke = confirmForm(view.member, {
    url: `/console/keys/${encodeURIComponent(key.id)}/revoke`,
    summary: t('console.revokeMore'),
    question: t('console.keys.revokeQuestion', { id: key.id }),
    button: t('console.revoke'),
    label: t('console.revokeLabel', { name: key.id }),
  });
  return `${until}<div class="actions">${key.expires_at ? '' : rollForm(view, key)}${revoke}</div>`;
}

export function keysPage(view: ConsoleView, keys: ApiKeyInfo[], outcome: { created?: CreatedApiKey; error?: string } = {}): string {
  const { words } = view;
  const { t } = words;
  const admin = hasRole(view.member, 'admin');
  const nowMs = Date.now();
  const rows = keys
    .filter((key) => key.mode === view.mode)
    .map((key) => [
      `${key.name ? `<strong>${escapeHtml(key.name)}</strong><br>` : ''}<code>${key.id}</code>${key.last_four ? `<br><code class="muted">…${escapeHtml(key.last_four)}</code>` : ''}`,
      scopeList(view, key.scopes),
      `${timeOf(words, key.created_at)}${key.created_by ? `<br><span class="muted">${escapeHtml(t('console.by', { email: key.created_by }))}</span>` : ''}`,
      timeOf(words, key.last_used_at),
      stateOf(view, key, admin, nowMs),
    ]);
  return consolePage(
    view,
    t('console.nav.keys'),
    `${outcome.created ? newKeyBox(view, outcome.created) : ''}
${table(
  t(view.mode === 'live' ? 'console.keys.liveCaption' : 'console.keys.testCaption'),
  [t('console.keys.key'), t('console.keys.scopes'), t('console.created'), t('console.keys.lastUsed'), ''],
  rows,
  t(view.mode === 'live' ? 'console.keys.noneLive' : 'console.keys.noneTest'),
)}
${admin ? createForm(view, outcome.error) : ''}`,
  );
}
