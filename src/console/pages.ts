// The console's HTML: small server-rendered pages with one local stylesheet, no script needed.
import type { SignedInMember } from './session.js';

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/console-assets/console.css">
</head>
<body>
${body}
</body>
</html>
`;
}

export function signInPage(input: { returnTo: string; email?: string; error?: string; formToken: string }): string {
  const error = input.error ? `<p class="error" role="alert" id="sign-in-error">${escapeHtml(input.error)}</p>` : '';
  return page(
    'Sign in · Console',
    `<main>
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
  );
}

/** The form that signs the member out (every console page's header carries it). */
export const signOutForm = (member: SignedInMember) =>
  `<form class="inline" method="post" action="/console/sign-out"><input type="hidden" name="csrf_token" value="${escapeHtml(member.csrfToken)}"><button type="submit" class="secondary">Sign out</button></form>`;

export function homePage(member: SignedInMember): string {
  return page(
    `${member.orgName} · Console`,
    `<header>
<h1>${escapeHtml(member.orgName)}</h1>
<div><span class="muted">${escapeHtml(member.email)}</span> ${signOutForm(member)}</div>
</header>
<main>
<p>You are signed in to the console of <strong>${escapeHtml(member.orgName)}</strong> as ${escapeHtml(member.role)}.</p>
</main>`,
  );
}
