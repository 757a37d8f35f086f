// The sign-in page: before there is a member, so outside the console's frame (./layout.ts).
import { escapeHtml, htmlDocument } from '../web/html.js';
import { STYLESHEET } from './layout.js';

export function signInPage(input: { returnTo: string; email?: string; error?: string; formToken: string }): string {
  const error = input.error ? `<p class="error" role="alert" id="sign-in-error">${escapeHtml(input.error)}</p>` : '';
  return htmlDocument({
    title: 'Sign in · Console',
    stylesheets: [STYLESHEET],
    body: `<main>
<form class="card" method="post" action="/console/sign-in" novalidate>
<h1>Sign in to the console</h1>
${error}
<input type="hidden" name="return_to" value="${escapeHtml(input.returnTo)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.formToken)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(input.email ?? '')}"${input.email ? '' : ' autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${input.email ? ' autofocus' : ''}>
<button type="submit">Sign in</button>
</form>
</main>`,
  });
}

/** A one-time link's page: the invited person (or a member resetting) chooses a password. */
export function linkPage(input: { token: string; kind: 'invitation' | 'password_reset'; email: string; orgName: string; error?: string; minLength: number }): string {
  const invitation = input.kind === 'invitation';
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : '';
  return htmlDocument({
    title: `${invitation ? 'Join' : 'New password'} · Console`,
    stylesheets: [STYLESHEET],
    body: `<main>
<form class="card" method="post" action="/console/link/${escapeHtml(input.token)}" novalidate>
<h1>${invitation ? `Join ${escapeHtml(input.orgName)}` : 'Choose a new password'}</h1>
<p>${invitation ? 'You are invited as' : 'For'} <strong>${escapeHtml(input.email)}</strong>${invitation ? '' : ` in ${escapeHtml(input.orgName)}`}.</p>
${error}
<label for="new-password">${invitation ? 'Choose a password' : 'New password'}</label>
<input id="new-password" name="new_password" type="password" autocomplete="new-password" required minlength="${input.minLength}" maxlength="1024" aria-describedby="password-rule" autofocus>
<p id="password-rule" class="muted">${input.minLength} characters or more.</p>
<button type="submit">${invitation ? 'Join' : 'Set password'}</button>
</form>
</main>`,
  });
}

/** A link that no longer opens anything. */
export function usedLinkPage(message: string): string {
  return htmlDocument({
    title: 'Link · Console',
    stylesheets: [STYLESHEET],
    body: `<main><div class="card"><h1>This link does not open</h1><p class="error" role="alert">${escapeHtml(message)}</p>
<p><a href="/console/sign-in">Sign in</a></p></div></main>`,
  });
}

/** The second step of a sign-in with two-factor on: the code the authenticator app shows, or a recovery code. */
export function twoFactorPage(input: { error?: string }): string {
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : '';
  return htmlDocument({
    title: 'Two-factor sign-in · Console',
    stylesheets: [STYLESHEET],
    body: `<main>
<form class="card" method="post" action="/console/sign-in/two-factor" novalidate>
<h1>Two-factor sign-in</h1>
${error}
<label for="code">Authentication code</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required maxlength="20" aria-describedby="code-help" autofocus>
<p id="code-help" class="muted">The 6 digits your authenticator app shows, or one of your recovery codes.</p>
<button type="submit">Verify</button>
</form>
</main>`,
  });
}
