// The signed-in member's own account: a new password (asks for the current one; every other session
// ends), two-factor sign-in (set up with an authenticator app by its QR code or secret, recovery codes
// shown once, turned off unless the organization requires it) and signing out everywhere.
import { MIN_PASSWORD_LENGTH } from '../../members/passwords.js';
import { escapeHtml } from '../../web/html.js';
import { confirmForm, consolePage, csrfField, wordsWithHtml, type ConsoleView } from '../layout.js';

export interface TwoFactorView {
  on: boolean;
  required: boolean;
  /** An enrollment waiting for its first code: the secret and its QR code (SVG, drawn on the server). */
  enrollment?: { secret: string; qrSvg: string };
  recoveryCodesLeft: number;
}

function twoFactorSection(view: ConsoleView, twoFactor: TwoFactorView, recoveryCodes?: string[], error?: string): string {
  const { t } = view.words;
  const csrf = csrfField(view.member);
  const codes = recoveryCodes
    ? `<section class="secret" aria-labelledby="recovery-title">
<h4 id="recovery-title">${escapeHtml(t('console.account.recoveryTitle'))}</h4>
<p>${escapeHtml(t('console.account.recoveryHelp'))}</p>
<pre id="recovery-codes" class="key">${recoveryCodes.map(escapeHtml).join('\n')}</pre>
<button type="button" data-copy="recovery-codes">${escapeHtml(t('console.copy'))}</button>
</section>`
    : '';
  let body: string;
  if (twoFactor.on) {
    body = `<p>${wordsWithHtml(view.words, 'console.account.on', { on: `<strong>${escapeHtml(t('console.account.onWord'))}</strong>` })} ${escapeHtml(t('console.account.codesLeft', { count: twoFactor.recoveryCodesLeft }))}</p>
${codes}
${
  twoFactor.required
    ? `<p class="muted">${escapeHtml(t('console.account.cannotTurnOff'))}</p>`
    : confirmForm(view.member, {
        url: '/console/account/two-factor/disable',
        summary: t('console.account.turnOffMore'),
        question: t('console.account.turnOffQuestion'),
        button: t('console.account.turnOff'),
        label: t('console.account.turnOffLabel'),
      })
}`;
  } else if (twoFactor.enrollment) {
    body = `<p>${escapeHtml(t('console.account.scan'))}</p>
<figure class="qr" role="img" aria-label="${escapeHtml(t('console.account.qr'))}">${twoFactor.enrollment.qrSvg}</figure>
<p>${wordsWithHtml(view.words, 'console.account.secret', { secret: `<code id="totp-secret">${escapeHtml(twoFactor.enrollment.secret)}</code>` })}</p>
<form method="post" action="/console/account/two-factor/confirm">${csrf}
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<label for="totp-code">${escapeHtml(t('console.account.codeFromApp'))}</label>
<input id="totp-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="6">
<button type="submit">${escapeHtml(t('console.account.turnOn'))}</button>
</form>`;
  } else {
    body = `<p>${escapeHtml(t('console.account.off'))}</p>
<form method="post" action="/console/account/two-factor/start">${csrf}<button type="submit">${escapeHtml(t('console.account.setUp'))}</button></form>`;
  }
  return `<section class="panel" id="two-factor" aria-labelledby="two-factor-title">
<h3 id="two-factor-title">${escapeHtml(t('console.twoFactor.heading'))}</h3>
${body}
</section>`;
}

export function accountPage(view: ConsoleView, outcome: { error?: string; recoveryCodes?: string[]; twoFactor: TwoFactorView }): string {
  const { words } = view;
  const { t } = words;
  const passwordError = outcome.twoFactor.enrollment ? undefined : outcome.error;
  const everywhere = t('console.account.everywhere');
  return consolePage(
    view,
    t('console.nav.account'),
    `<p>${wordsWithHtml(words, 'console.account.signedInAs', {
      email: `<strong>${escapeHtml(view.member.email)}</strong>`,
      role: `<span class="role">${escapeHtml(t(`console.role.${view.member.role}`))}</span>`,
      org: escapeHtml(view.member.orgName),
    })}</p>
${twoFactorSection(view, outcome.twoFactor, outcome.recoveryCodes, outcome.twoFactor.enrollment ? outcome.error : undefined)}
<form class="panel" method="post" action="/console/account/password">
<h3>${escapeHtml(t('console.account.changeTitle'))}</h3>
${passwordError ? `<p class="error" role="alert">${escapeHtml(passwordError)}</p>` : ''}${csrfField(view.member)}
<label for="current-password">${escapeHtml(t('console.account.current'))}</label>
<input id="current-password" name="current_password" type="password" autocomplete="current-password" required>
<label for="new-password">${escapeHtml(t('console.link.newPassword'))} <span class="muted">${escapeHtml(t('console.account.rule', { count: MIN_PASSWORD_LENGTH }))}</span></label>
<input id="new-password" name="new_password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="1024">
<p class="muted">${escapeHtml(t('console.account.othersOut'))}</p>
<button type="submit">${escapeHtml(t('console.account.change'))}</button>
</form>
<section class="panel">
<h3>${escapeHtml(everywhere)}</h3>
${confirmForm(view.member, {
  url: '/console/account/sign-out-everywhere',
  summary: t('console.account.everywhereMore'),
  question: t('console.account.everywhereQuestion'),
  button: everywhere,
  label: everywhere,
})}
</section>`,
  );
}
