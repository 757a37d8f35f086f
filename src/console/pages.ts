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
