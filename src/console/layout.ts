// The frame of every signed-in console page: the organization, the sections, the test-mode switch,
// who is signed in and sign-out. Pages are server-rendered; the one script (copy buttons, the live
// view of events) is a local asset.
import type { Mode } from '../auth/principal.js';
import { escapeHtml, htmlDocument } from '../web/html.js';
import { translator } from '../web/i18n/catalogue.js';
import type { SignedInMember } from './session.js';

export const SECTIONS = [
  { path: '/console', label: 'Overview' },
  { path: '/console/keys', label: 'API keys' },
  { path: '/console/apps', label: 'Apps' },
  { path: '/console/calls', label: 'Calls' },
  { path: '/console/sessions', label: 'Sessions' },
  { path: '/console/events', label: 'Events' },
  { path: '/console/webhooks', label: 'Webhooks' },
  { path: '/console/phone-numbers', label: translator('en').t('console.phoneNumbers.title') },
  { path: '/console/ledger', label: 'Ledger' },
  { path: '/console/members', label: 'Members' },
  { path: '/console/account', label: 'Your account' },
] as const;

export type SectionPath = (typeof SECTIONS)[number]['path'];

/** Who is looking, at which data (live or test), from which page. */
export interface ConsoleView {
  member: SignedInMember;
  mode: Mode;
  path: SectionPath;
  /** What the form before this page did, said once (post/redirect/get). */
  notices?: string[];
}

export const STYLESHEET = '/console-assets/console.css';
const SCRIPT = '/console-assets/console.js';

export const csrfField = (member: SignedInMember) => `<input type="hidden" name="csrf_token" value="${escapeHtml(member.csrfToken)}">`;

/**
 * A destructive action behind a second question: `summary` opens it, `question` says what stops
 * working, the button does it. Plain HTML (details/summary): keyboard and screen readers need no script.
 */
export function confirmForm(
  member: SignedInMember,
  action: { url: string; summary: string; question: string; button: string; label: string; fields?: string },
): string {
  return `<details class="confirm"><summary>${escapeHtml(action.summary)}</summary>
<form method="post" action="${escapeHtml(action.url)}">${csrfField(member)}${action.fields ?? ''}
<p>${escapeHtml(action.question)}</p>
<button type="submit" class="danger" aria-label="${escapeHtml(action.label)}">${escapeHtml(action.button)}</button>
</form></details>`;
}

/** The form that signs the member out. */
const signOutForm = (member: SignedInMember) =>
  `<form class="inline" method="post" action="/console/sign-out">${csrfField(member)}<button type="submit" class="secondary">Sign out</button></form>`;

/** Stripe-like: one switch shows the test data (keys, calls, sessions, events, webhooks, usage) instead of the live. */
const modeSwitch = (view: ConsoleView) => {
  const testing = view.mode === 'test';
  return `<form class="inline" method="post" action="/console/mode">${csrfField(view.member)}<input type="hidden" name="return_to" value="${view.path}"><button type="submit" name="mode" value="${testing ? 'live' : 'test'}" role="switch" aria-checked="${testing}" class="switch">Test mode</button></form>`;
};

export function consolePage(view: ConsoleView, heading: string, body: string): string {
  const section = SECTIONS.find((s) => s.path === view.path)!;
  const nav = SECTIONS.map(
    (s) => `<a href="${s.path}"${s.path === view.path ? ' aria-current="page"' : ''}>${escapeHtml(s.label)}</a>`,
  ).join('');
  const banner = view.mode === 'test' ? '<p class="test-banner" role="status">Test data: nothing here is billed or live.</p>' : '';
  return htmlDocument({
    title: `${section.label} · ${view.member.orgName} · Console`,
    stylesheets: [STYLESHEET],
    scripts: [SCRIPT],
    body: `${banner}<header>
<h1>${escapeHtml(view.member.orgName)}</h1>
<div class="who">${modeSwitch(view)} <span class="muted">${escapeHtml(view.member.email)}</span> ${signOutForm(view.member)}</div>
<nav aria-label="Console">${nav}</nav>
</header>
<main>
<h2>${escapeHtml(heading)}</h2>
${(view.notices ?? []).map((text) => `<p class="notice" role="status">${escapeHtml(text)}</p>`).join('')}${body}
</main>`,
  });
}

/** A console page for a refused request (a stale form, another organization's key, ...). */
export function problemPage(status: number, message: string): string {
  return htmlDocument({
    title: 'Console',
    stylesheets: [STYLESHEET],
    body: `<main><div class="card"><h1>${status === 401 ? 'Please sign in again' : 'That did not work'}</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p><a href="/console">Back to the console</a></p></div></main>`,
  });
}

/** An instant as the console shows it: the UTC minute, machine-readable in `datetime`. */
export function timeOf(at: string | Date | null): string {
  if (at === null) return '<span class="muted">never</span>';
  const iso = typeof at === 'string' ? at : at.toISOString();
  return `<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

/**
 * A table that scrolls sideways by itself on a narrow screen instead of widening the page; the
 * scrolling region is focusable and named, so a keyboard can scroll it.
 */
export const table = (caption: string, head: string[], rows: string[][], empty: string) =>
  rows.length
    ? `<div class="table" tabindex="0" role="region" aria-label="${escapeHtml(caption)}"><table><caption class="visually-hidden">${escapeHtml(caption)}</caption><thead><tr>${head
        .map((h) => `<th scope="col">${escapeHtml(h)}</th>`)
        .join('')}</tr></thead><tbody>${rows.map((cells) => `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('')}</tbody></table></div>`
    : `<p class="muted empty">${escapeHtml(empty)}</p>`;
