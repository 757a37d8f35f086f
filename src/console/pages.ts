// The sign-in page: before there is a member, so outside the console's frame (./layout.ts).
import { escapeHtml } from '../web/html.js';
import type { PageWords } from '../web/i18n/catalogue.js';
import { consoleDocument, STYLESHEET, wordsWithHtml } from './layout.js';

export function signInPage(words: PageWords, input: { returnTo: string; email?: string; error?: string; formToken: string }): string {
  const { t } = words;
  const error = input.error ? `<p class="error" role="alert" id="sign-in-error">${escapeHtml(input.error)}</p>` : '';
  return consoleDocument(words, {
    title: `${t('console.signIn.button')} · ${t('console.title')}`,
    stylesheets: [STYLESHEET],
    body: `<main>
<form class="card" method="post" action="/console/sign-in" novalidate>
<h1>${escapeHtml(t('console.signIn.heading'))}</h1>
${error}
<input type="hidden" name="return_to" value="${escapeHtml(input.returnTo)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.formToken)}">
<label for="email">${escapeHtml(t('console.signIn.email'))}</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(input.email ?? '')}"${input.email ? '' : ' autofocus'}>
<label for="password">${escapeHtml(t('console.signIn.password'))}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${input.email ? ' autofocus' : ''}>
<button type="submit">${escapeHtml(t('console.signIn.button'))}</button>
</form>
</main>`,
  });
}

/** A one-time link's page: the invited person (or a member resetting) chooses a password. */
export function linkPage(
  words: PageWords,
  input: { token: string; kind: 'invitation' | 'password_reset'; email: string; orgName: string; error?: string; minLength: number },
): string {
  const { t } = words;
  const invitation = input.kind === 'invitation';
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : '';
  const email = `<strong>${escapeHtml(input.email)}</strong>`;
  const org = escapeHtml(input.orgName);
  return consoleDocument(words, {
    title: `${t(invitation ? 'console.link.join' : 'console.link.newPassword')} · ${t('console.title')}`,
    stylesheets: [STYLESHEET],
    body: `<main>
<form class="card" method="post" action="/console/link/${escapeHtml(input.token)}" novalidate>
<h1>${invitation ? escapeHtml(t('console.link.joinOrg', { org: input.orgName })) : escapeHtml(t('console.link.chooseNew'))}</h1>
<p>${wordsWithHtml(words, invitation ? 'console.link.invitedAs' : 'console.link.resetFor', { email, org })}</p>
${error}
<label for="new-password">${escapeHtml(t(invitation ? 'console.link.choosePassword' : 'console.link.newPassword'))}</label>
<input id="new-password" name="new_password" type="password" autocomplete="new-password" required minlength="${input.minLength}" maxlength="1024" aria-describedby="password-rule" autofocus>
<p id="password-rule" class="muted">${escapeHtml(t('console.link.rule', { count: input.minLength }))}</p>
<button type="submit">${escapeHtml(t(invitation ? 'console.link.join' : 'console.link.setPassword'))}</button>
</form>
</main>`,
  });
}

/** A link that no longer opens anything. */
export function usedLinkPage(words: PageWords, message: string): string {
  const { t } = words;
  return consoleDocument(words, {
    title: `${t('console.link.title')} · ${t('console.title')}`,
    stylesheets: [STYLESHEET],
    body: `<main><div class="card"><h1>${escapeHtml(t('console.link.used'))}</h1><p class="error" role="alert">${escapeHtml(message)}</p>
<p><a href="/console/sign-in">${escapeHtml(t('console.signIn.button'))}</a></p></div></main>`,
  });
}

/** The second step of a sign-in with two-factor on: the code the authenticator app shows, or a recovery code. */
export function twoFactorPage(words: PageWords, input: { error?: string }): string {
  const { t } = words;
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : '';
  return consoleDocument(words, {
    title: `${t('console.twoFactor.heading')} · ${t('console.title')}`,
    stylesheets: [STYLESHEET],
    body: `<main>
<form class="card" method="post" action="/console/sign-in/two-factor" novalidate>
<h1>${escapeHtml(t('console.twoFactor.heading'))}</h1>
${error}
<label for="code">${escapeHtml(t('console.twoFactor.code'))}</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="20" aria-describedby="code-help" autofocus>
<p id="code-help" class="muted">${escapeHtml(t('console.twoFactor.help'))}</p>
<button type="submit">${escapeHtml(t('console.twoFactor.verify'))}</button>
</form>
</main>`,
  });
}
