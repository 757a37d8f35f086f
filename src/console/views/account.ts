// The signed-in member's own account: a new password (asks for the current one; every other session
// ends) and signing out everywhere.
import { MIN_PASSWORD_LENGTH } from '../../members/passwords.js';
import { escapeHtml } from '../../web/html.js';
import { confirmForm, consolePage, csrfField, type ConsoleView } from '../layout.js';

export function accountPage(view: ConsoleView, error?: string): string {
  return consolePage(
    view,
    'Your account',
    `<p>Signed in as <strong>${escapeHtml(view.member.email)}</strong>, <span class="role">${escapeHtml(view.member.role)}</span> of ${escapeHtml(view.member.orgName)}.</p>
<form class="panel" method="post" action="/console/account/password">
<h3>Change your password</h3>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}${csrfField(view.member)}
<label for="current-password">Current password</label>
<input id="current-password" name="current_password" type="password" autocomplete="current-password" required>
<label for="new-password">New password <span class="muted">(${MIN_PASSWORD_LENGTH} characters or more)</span></label>
<input id="new-password" name="new_password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="1024">
<p class="muted">Your other sessions are signed out.</p>
<button type="submit">Change password</button>
</form>
<section class="panel">
<h3>Sign out everywhere</h3>
${confirmForm(view.member, {
  url: '/console/account/sign-out-everywhere',
  summary: 'Sign out everywhere…',
  question: 'Sign out of the console on every device and browser, this one included? The live views open there stop.',
  button: 'Sign out everywhere',
  label: 'Sign out everywhere',
})}
</section>`,
  );
}
