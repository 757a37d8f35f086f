// The signed-in member's own account: a new password (asks for the current one; every other session
// ends), two-factor sign-in (set up with an authenticator app by its QR code or secret, recovery codes
// shown once, turned off unless the organization requires it) and signing out everywhere.
import { MIN_PASSWORD_LENGTH } from '../../members/passwords.js';
import { escapeHtml } from '../../web/html.js';
import { confirmForm, consolePage, csrfField, type ConsoleView } from '../layout.js';

export interface TwoFactorView {
  on: boolean;
  required: boolean;
  /** An enrollment waiting for its first code: the secret and its QR code (SVG, drawn on the server). */
  enrollment?: { secret: string; qrSvg: string };
  recoveryCodesLeft: number;
}

function twoFactorSection(view: ConsoleView, twoFactor: TwoFactorView, recoveryCodes?: string[], error?: string): string {
  const csrf = csrfField(view.member);
  const codes = recoveryCodes
    ? `<section class="secret" aria-labelledby="recovery-title">
<h4 id="recovery-title">Your recovery codes</h4>
<p>Each opens one sign-in without your phone. Keep them somewhere safe: they are not shown again.</p>
<pre id="recovery-codes" class="key">${recoveryCodes.map(escapeHtml).join('\n')}</pre>
<button type="button" data-copy="recovery-codes">Copy</button>
</section>`
    : '';
  let body: string;
  if (twoFactor.on) {
    body = `<p><strong>On.</strong> Signing in asks for a code from your authenticator app. ${twoFactor.recoveryCodesLeft} recovery codes left.</p>
${codes}
${
  twoFactor.required
    ? '<p class="muted">Your organization requires it, so it cannot be turned off.</p>'
    : confirmForm(view.member, {
        url: '/console/account/two-factor/disable',
        summary: 'Turn off…',
        question: 'Turn two-factor sign-in off? Your password alone will sign you in, and your recovery codes stop working.',
        button: 'Turn off',
        label: 'Turn off two-factor sign-in',
      })
}`;
  } else if (twoFactor.enrollment) {
    body = `<p>Scan this code with an authenticator app, or type the secret into it, then enter the 6 digits it shows.</p>
<figure class="qr" role="img" aria-label="QR code of your two-factor secret">${twoFactor.enrollment.qrSvg}</figure>
<p>Secret: <code id="totp-secret">${escapeHtml(twoFactor.enrollment.secret)}</code></p>
<form method="post" action="/console/account/two-factor/confirm">${csrf}
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<label for="totp-code">Code from the app</label>
<input id="totp-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="6">
<button type="submit">Turn on</button>
</form>`;
  } else {
    body = `<p>Off. With it on, signing in also asks for a code from an authenticator app on your phone.</p>
<form method="post" action="/console/account/two-factor/start">${csrf}<button type="submit">Set up two-factor sign-in</button></form>`;
  }
  return `<section class="panel" id="two-factor" aria-labelledby="two-factor-title">
<h3 id="two-factor-title">Two-factor sign-in</h3>
${body}
</section>`;
}

export function accountPage(view: ConsoleView, outcome: { error?: string; recoveryCodes?: string[]; twoFactor: TwoFactorView }): string {
  const passwordError = outcome.twoFactor.enrollment ? undefined : outcome.error;
  return consolePage(
    view,
    'Your account',
    `<p>Signed in as <strong>${escapeHtml(view.member.email)}</strong>, <span class="role">${escapeHtml(view.member.role)}</span> of ${escapeHtml(view.member.orgName)}.</p>
${twoFactorSection(view, outcome.twoFactor, outcome.recoveryCodes, outcome.twoFactor.enrollment ? outcome.error : undefined)}
<form class="panel" method="post" action="/console/account/password">
<h3>Change your password</h3>
${passwordError ? `<p class="error" role="alert">${escapeHtml(passwordError)}</p>` : ''}${csrfField(view.member)}
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
