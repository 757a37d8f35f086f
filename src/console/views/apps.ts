// Connected apps: which app, with which scopes, since when; revoking one stops its tokens at once.
import type { ConnectedApp } from '../../oauth/connections.js';
import { escapeHtml } from '../../web/html.js';
import { SCOPE_WORDS } from '../../web/scopeWords.js';
import { confirmForm, consolePage, table, timeOf, type ConsoleView } from '../layout.js';
import { hasRole } from '../session.js';

export function appsPage(view: ConsoleView, apps: ConnectedApp[]): string {
  const rows = apps.map((app) => [
    `<strong>${escapeHtml(app.appName)}</strong><br><code class="muted">${escapeHtml(app.clientId)}</code>`,
    `<ul class="scopes">${app.scopes.map((s) => `<li>${escapeHtml(SCOPE_WORDS[s])} <code>${s}</code></li>`).join('')}</ul>`,
    `${timeOf(app.since)}<br><span class="muted">${app.approvedBy ? `by ${escapeHtml(app.approvedBy)}` : 'by a member since removed'}</span>`,
    hasRole(view.member, 'admin')
      ? confirmForm(view.member, {
          url: `/console/apps/${encodeURIComponent(app.connectionId)}/revoke`,
          summary: 'Revoke…',
          question: `Disconnect ${app.appName}? Its access and refresh tokens stop working at once, and its event streams end.`,
          button: 'Revoke',
          label: `Revoke ${app.appName}`,
        })
      : '',
  ]);
  return consolePage(
    view,
    'Connected apps',
    `<p class="muted">Apps act in live mode, with the scopes you allowed.</p>
${table('Connected apps', ['App', 'May', 'Connected', ''], rows, 'No apps are connected.')}`,
  );
}
