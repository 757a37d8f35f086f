// The frame of every signed-in console page: the organization, the sections, the test-mode switch,
// who is signed in and sign-out. Pages are server-rendered; the one script (copy buttons, the live
// view of events) is a local asset.
import type { Mode } from '../auth/principal.js';
import { escapeHtml, htmlDocument, type HtmlDocument } from '../web/html.js';
import type { PageWords } from '../web/i18n/catalogue.js';
import type { SignedInMember } from './session.js';

/** The sections, each named by its catalogue key. */
export const SECTIONS = [
  { path: '/console', label: 'console.nav.overview' },
  { path: '/console/keys', label: 'console.nav.keys' },
  { path: '/console/apps', label: 'console.nav.apps' },
  { path: '/console/calls', label: 'console.nav.calls' },
  { path: '/console/sessions', label: 'console.nav.sessions' },
  { path: '/console/events', label: 'console.nav.events' },
  { path: '/console/webhooks', label: 'console.nav.webhooks' },
  { path: '/console/phone-numbers', label: 'console.phoneNumbers.title' },
  { path: '/console/ledger', label: 'console.nav.ledger' },
  { path: '/console/members', label: 'console.nav.members' },
  { path: '/console/account', label: 'console.nav.account' },
] as const;

export type SectionPath = (typeof SECTIONS)[number]['path'];

/** Who is looking, at which data (live or test), from which page. */
export interface ConsoleView {
  member: SignedInMember;
  /** The reader's language (./language.ts). */
  words: PageWords;
  mode: Mode;
  path: SectionPath;
  /** What the form before this page did, said once (post/redirect/get). */
  notices?: string[];
}

export const STYLESHEET = '/console-assets/console.css';
const SCRIPT = '/console-assets/console.js';

/** Words the console's script writes (the copy button's answer, the live events' state), in the page's language. */
const SCRIPT_WORDS = ['console.script.copied', 'console.script.copyByHand', 'console.script.live', 'console.script.stopped', 'console.script.reconnecting', 'console.script.details'];

/** A console document in the reader's language and direction. */
export function consoleDocument(words: PageWords, doc: HtmlDocument): string {
  return htmlDocument(doc).replace('<html lang="en">', `<html lang="${words.lang}" dir="${words.dir}">`);
}

/** A catalogue string escaped, its `{placeholders}` filled with markup (a bold email, a link). */
export const wordsWithHtml = (words: PageWords, key: string, markup: Record<string, string>) =>
  escapeHtml(words.t(key)).replace(/\{(\w+)\}/g, (whole, name: string) => markup[name] ?? whole);

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
const signOutForm = (view: ConsoleView) =>
  `<form class="inline" method="post" action="/console/sign-out">${csrfField(view.member)}<button type="submit" class="secondary">${escapeHtml(view.words.t('console.signOut'))}</button></form>`;

/** Stripe-like: one switch shows the test data (keys, calls, sessions, events, webhooks, usage) instead of the live. */
const modeSwitch = (view: ConsoleView) => {
  const testing = view.mode === 'test';
  return `<form class="inline" method="post" action="/console/mode">${csrfField(view.member)}<input type="hidden" name="return_to" value="${view.path}"><button type="submit" name="mode" value="${testing ? 'live' : 'test'}" role="switch" aria-checked="${testing}" class="switch">${escapeHtml(view.words.t('console.testMode'))}</button></form>`;
};

export function consolePage(view: ConsoleView, heading: string, body: string): string {
  const { t } = view.words;
  const section = SECTIONS.find((s) => s.path === view.path)!;
  const nav = SECTIONS.map(
    (s) => `<a href="${s.path}"${s.path === view.path ? ' aria-current="page"' : ''}>${escapeHtml(t(s.label))}</a>`,
  ).join('');
  const banner = view.mode === 'test' ? `<p class="test-banner" role="status">${escapeHtml(t('console.testBanner'))}</p>` : '';
  const scriptWords = Object.fromEntries(SCRIPT_WORDS.map((key) => [key, t(key)]));
  return consoleDocument(view.words, {
    title: `${t(section.label)} · ${view.member.orgName} · ${t('console.title')}`,
    stylesheets: [STYLESHEET],
    scripts: [SCRIPT],
    body: `${banner}<header>
<h1>${escapeHtml(view.member.orgName)}</h1>
<div class="who">${modeSwitch(view)} <span class="muted">${escapeHtml(view.member.email)}</span> ${signOutForm(view)}</div>
<nav aria-label="${escapeHtml(t('console.title'))}">${nav}</nav>
</header>
<main>
<h2>${escapeHtml(heading)}</h2>
${(view.notices ?? []).map((text) => `<p class="notice" role="status">${escapeHtml(text)}</p>`).join('')}${body}
</main>
<script type="application/json" id="console-words">${JSON.stringify(scriptWords).replace(/</g, '\\u003c')}</script>`,
  });
}

/** A console page for a refused request (a stale form, another organization's key, ...). */
export function problemPage(words: PageWords, status: number, message: string): string {
  const { t } = words;
  return consoleDocument(words, {
    title: t('console.title'),
    stylesheets: [STYLESHEET],
    body: `<main><div class="card"><h1>${escapeHtml(t(status === 401 ? 'console.problem.signInAgain' : 'console.problem.failed'))}</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p><a href="/console">${escapeHtml(t('console.problem.back'))}</a></p></div></main>`,
  });
}

/** An instant as the console shows it: the UTC minute, machine-readable in `datetime`. */
export function timeOf(words: PageWords, at: string | Date | null): string {
  if (at === null) return `<span class="muted">${escapeHtml(words.t('console.never'))}</span>`;
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
