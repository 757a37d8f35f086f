// Members: who belongs to the organization, their role and state. Owners change roles, disable or
// enable, remove (after a confirmation), make a password reset link, and invite by a one-time link
// that they copy and hand on (no mail is sent).
import { MEMBER_ROLES, type Member, type MemberRole } from '../../members/members.js';
import type { MadeLink } from '../../members/links.js';
import { escapeHtml } from '../../web/html.js';
import { confirmForm, consolePage, csrfField, table, timeOf, type ConsoleView } from '../layout.js';
import { hasRole } from '../session.js';

/** Each role with what it may do, as the role pickers offer it. */
const roleOptions = (view: ConsoleView, selected: MemberRole) =>
  MEMBER_ROLES.map((role) => `<option value="${role}"${role === selected ? ' selected' : ''}>${escapeHtml(view.words.t(`console.role.${role}.may`))}</option>`).join('');

function ownerActions(view: ConsoleView, member: Member): string {
  const { t } = view.words;
  const email = member.email;
  const base = `/console/members/${encodeURIComponent(member.id)}`;
  const csrf = csrfField(view.member);
  const selectId = `role-${escapeHtml(member.id)}`;
  const role = `<form class="stack" method="post" action="${base}/role">${csrf}<label for="${selectId}" class="visually-hidden">${escapeHtml(t('console.members.roleOf', { email }))}</label><select id="${selectId}" name="role">${roleOptions(view, member.role)}</select><button type="submit" class="secondary" aria-label="${escapeHtml(t('console.members.changeRoleOf', { email }))}">${escapeHtml(t('console.members.changeRole'))}</button></form>`;
  const toggle = member.disabled_at
    ? `<form class="inline" method="post" action="${base}/enable">${csrf}<button type="submit" class="secondary" aria-label="${escapeHtml(t('console.members.enableLabel', { email }))}">${escapeHtml(t('console.members.enable'))}</button></form>`
    : confirmForm(view.member, {
        url: `${base}/disable`,
        summary: t('console.members.disableMore'),
        question: t('console.members.disableQuestion', { email }),
        button: t('console.members.disable'),
        label: t('console.members.disableLabel', { email }),
      });
  const reset = `<form class="inline" method="post" action="${base}/password_reset">${csrf}<button type="submit" class="secondary" aria-label="${escapeHtml(t('console.members.resetLabel', { email }))}">${escapeHtml(t('console.members.reset'))}</button></form>`;
  const remove = confirmForm(view.member, {
    url: `${base}/remove`,
    summary: t('console.members.removeMore'),
    question: t('console.members.removeQuestion', { email }),
    button: t('console.members.remove'),
    label: t('console.members.removeLabel', { email }),
  });
  return `${role}<div class="actions">${toggle} ${reset} ${remove}</div>`;
}

/** A one-time link just made: shown to copy, not again. */
const linkBox = (view: ConsoleView, made: { link: MadeLink; purpose: 'invitation' | 'password_reset'; email: string }) => {
  const { t } = view.words;
  return `<section class="secret" aria-labelledby="new-link-title">
<h3 id="new-link-title">${escapeHtml(t(made.purpose === 'invitation' ? 'console.members.invitationFor' : 'console.members.resetFor', { email: made.email }))}</h3>
<p>${escapeHtml(t('console.members.linkHelp', { until: `${made.link.expires_at.slice(0, 16).replace('T', ' ')} UTC` }))}</p>
<p><code id="new-link" class="key">${escapeHtml(made.link.url)}</code></p>
<button type="button" data-copy="new-link">${escapeHtml(t('console.copy'))}</button>
</section>`;
};

function inviteForm(view: ConsoleView, error?: string, email = ''): string {
  const { t } = view.words;
  return `<form class="panel" method="post" action="/console/members/invite">
<h3>${escapeHtml(t('console.members.invite'))}</h3>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}${csrfField(view.member)}
<label for="invite-email">${escapeHtml(t('console.signIn.email'))}</label>
<input id="invite-email" name="email" type="email" required maxlength="254" value="${escapeHtml(email)}">
<label for="invite-role">${escapeHtml(t('console.members.role'))}</label>
<select id="invite-role" name="role">${roleOptions(view, 'viewer')}</select>
<button type="submit">${escapeHtml(t('console.members.inviteButton'))}</button>
</form>`;
}

/** An owner's rule for everyone: two-factor sign-in required (or not). */
function requireTwoFactorForm(view: ConsoleView): string {
  const { t } = view.words;
  const required = view.member.orgRequiresTwoFactor;
  return `<form class="panel" method="post" action="/console/members/require-two-factor">${csrfField(view.member)}
<h3>${escapeHtml(t('console.twoFactor.heading'))}</h3>
<p>${escapeHtml(t(required ? 'console.members.requiredText' : 'console.members.notRequiredText'))}</p>
<input type="hidden" name="required" value="${required ? 'off' : 'on'}">
<button type="submit"${required ? ' class="secondary"' : ''}>${escapeHtml(t(required ? 'console.members.stopRequiring' : 'console.members.require'))}</button>
</form>`;
}

export function membersPage(
  view: ConsoleView,
  members: Member[],
  outcome: { link?: Parameters<typeof linkBox>[1]; error?: string; email?: string } = {},
): string {
  const { words } = view;
  const { t } = words;
  const owner = hasRole(view.member, 'owner');
  const rows = members.map((member) => [
    `${escapeHtml(member.email)}${member.id === view.member.id ? ` <span class="muted">${escapeHtml(t('console.members.you'))}</span>` : ''}`,
    `<span class="role">${escapeHtml(t(`console.role.${member.role}`))}</span>`,
    member.disabled_at
      ? `<strong>${escapeHtml(t('console.members.disabledState'))}</strong> ${timeOf(words, member.disabled_at)}`
      : `<span class="status open">${escapeHtml(t('console.keys.active'))}</span>`,
    timeOf(words, member.created_at),
    ...(owner ? [ownerActions(view, member)] : []),
  ]);
  return consolePage(
    view,
    t('console.nav.members'),
    `${outcome.link ? linkBox(view, outcome.link) : ''}
<p class="muted">${escapeHtml(t(owner ? 'console.members.ownersManage' : 'console.members.onlyOwners'))}</p>
${table(
  t('console.nav.members'),
  [t('console.signIn.email'), t('console.members.role'), t('console.members.state'), t('console.members.joined'), ...(owner ? [''] : [])],
  rows,
  t('console.members.none'),
)}
${owner ? `${inviteForm(view, outcome.error, outcome.email)}
${requireTwoFactorForm(view)}` : ''}`,
  );
}
