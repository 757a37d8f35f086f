// Connected apps: which app, with which scopes, since when; revoking one stops its tokens at once.
import type { ConnectedApp } from '../../oauth/connections.js';
import { escapeHtml } from '../../web/html.js';
import { confirmForm, consolePage, table, timeOf, type ConsoleView } from '../layout.js';
import { hasRole } from '../session.js';

export function appsPage(view: ConsoleView, apps: ConnectedApp[]): string {
  const { words } = view;
  const { t } = words;
  const rows = apps.map((app) => [
    `<strong>${escapeHtml(app.appName)}</strong><br><code class="muted">${escapeHtml(app.clientId)}</code>`,
    `<ul class="scopes">${app.scopes.map((s) => `<li>${escapeHtml(t(`console.scope.${s}`))} <code>${s}</code></li>`).join('')}</ul>`,
    `${timeOf(words, app.since)}<br><span class="muted">${escapeHtml(app.approvedBy ? t('console.by', { email: app.approvedBy }) : t('console.apps.byRemoved'))}</span>`,
    hasRole(view.member, 'admin')
      ? confirmForm(view.member, {
          url: `/console/apps/${encodeURIComponent(app.connectionId)}/revoke`,
          summary: t('console.revokeMore'),
          question: t('console.apps.revokeQuestion', { name: app.appName }),
          button: t('console.revoke'),
          label: t('console.revokeLabel', { name: app.appName }),
        })
      : '',
  ]);
  return consolePage(
    view,
    t('console.apps.title'),
    `<p class="muted">${escapeHtml(t('console.apps.intro'))}</p>
${table(t('console.apps.title'), [t('console.apps.app'), t('console.apps.may'), t('console.apps.connected'), ''], rows, t('console.apps.none'))}`,
  );
}
