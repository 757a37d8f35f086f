// Members: who belongs to the organization, their role and state. Owners change roles, disable or
// enable, remove (after a confirmation), make a password reset link, and invite by a one-time link
// that they copy and hand on (no mail is sent).
import { MEMBER_ROLES, type Member, type MemberRole } from '../../members/members.js';
import type { MadeLink } from '../../members/links.js';
import { escapeHtml } from '../../web/html.js';
import { confirmForm, consolePage, csrfField, table, timeOf, type ConsoleView } from '../layout.js';
import { hasRole } from '../session.js';

export const ROLE_WORDS: Record<MemberRole, string> = {
  owner: 'Owner: everything, members included',
  admin: 'Admin: keys, webhooks, apps and data',
  viewer: 'Viewer: reads only',
};

const roleName = (role: MemberRole) => role.charAt(0).toUpperCase() + role.slice(1);

const roleOptions = (selected: MemberRole) =>
  MEMBER_ROLES.map((role) => `<option value="${role}"${role === selected ? ' selected' : ''}>${escapeHtml(ROLE_WORDS[role])}</option>`).join('');

function ownerActions(view: ConsoleView, member: Member): string {
  const base = `/console/members/${encodeURIComponent(member.id)}`;
  const csrf = csrfField(view.member);
  const selectId = `role-${escapeHtml(member.id)}`;
  const role = `<form class="stack" method="post" action="${base}/role">${csrf}<label for="${selectId}" class="visually-hidden">Role of ${escapeHtml(member.email)}</label><select id="${selectId}" name="role">${roleOptions(member.role)}</select><button type="submit" class="secondary" aria-label="Change role of ${escapeHtml(member.email)}">Change role</button></form>`;
  const toggle = member.disabled_at
    ? `<form class="inline" method="post" action="${base}/enable">${csrf}<button type="submit" class="secondary" aria-label="Enable ${escapeHtml(member.email)}">Enable</button></form>`
    : confirmForm(view.member, {
        url: `${base}/disable`,
        summary: 'Disable…',
        question: `Disable ${member.email}? They are signed out everywhere at once and cannot sign in until enabled again.`,
        button: 'Disable',
        label: `Disable ${member.email}`,
      });
  const reset = `<form class="inline" method="post" action="${base}/password_reset">${csrf}<button type="submit" class="secondary" aria-label="Password reset link for ${escapeHtml(member.email)}">Reset link</button></form>`;
  const remove = confirmForm(view.member, {
    url: `${base}/remove`,
    summary: 'Remove…',
    question: `Remove ${member.email}? They are signed out everywhere at once and can no longer sign in. Apps they approved stay connected.`,
    button: 'Remove',
    label: `Remove ${member.email}`,
  });
  return `${role}<div class="actions">${toggle} ${reset} ${remove}</div>`;
}

/** A one-time link just made: shown to copy, not again. */
const linkBox = (made: { link: MadeLink; purpose: 'invitation' | 'password_reset'; email: string }) => `<section class="secret" aria-labelledby="new-link-title">
<h3 id="new-link-title">${made.purpose === 'invitation' ? 'Invitation' : 'Password reset link'} for ${escapeHtml(made.email)}</h3>
<p>Copy it and send it to them yourself: no mail is sent, and it is not shown again. It opens once, until ${escapeHtml(made.link.expires_at.slice(0, 16).replace('T', ' '))} UTC.</p>
<p><code id="new-link" class="key">${escapeHtml(made.link.url)}</code></p>
<button type="button" data-copy="new-link">Copy</button>
</section>`;

function inviteForm(view: ConsoleView, error?: string, email = ''): string {
  return `<form class="panel" method="post" action="/console/members/invite">
<h3>Invite a member</h3>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}${csrfField(view.member)}
<label for="invite-email">Email</label>
<input id="invite-email" name="email" type="email" required maxlength="254" value="${escapeHtml(email)}">
<label for="invite-role">Role</label>
<select id="invite-role" name="role">${roleOptions('viewer')}</select>
<button type="submit">Make invitation link</button>
</form>`;
}

/** An owner's rule for everyone: two-factor sign-in required (or not). */
function requireTwoFactorForm(view: ConsoleView): string {
  const required = view.member.orgRequiresTwoFactor;
  return `<form class="panel" method="post" action="/console/members/require-two-factor">${csrfField(view.member)}
<h3>Two-factor sign-in</h3>
<p>${required ? 'Required: every member must sign in with a code from an authenticator app; members without one can only set it up.' : 'Not required: each member chooses on their own account page.'}</p>
<input type="hidden" name="required" value="${required ? 'off' : 'on'}">
<button type="submit"${required ? ' class="secondary"' : ''}>${required ? 'Stop requiring two-factor sign-in' : 'Require two-factor sign-in for everyone'}</button>
</form>`;
}

export function membersPage(
  view: ConsoleView,
  members: Member[],
  outcome: { link?: Parameters<typeof linkBox>[0]; error?: string; email?: string } = {},
): string {
  const owner = hasRole(view.member, 'owner');
  const rows = members.map((member) => [
    `${escapeHtml(member.email)}${member.id === view.member.id ? ' <span class="muted">(you)</span>' : ''}`,
    `<span class="role">${escapeHtml(roleName(member.role))}</span>`,
    member.disabled_at ? `<strong>Disabled</strong> ${timeOf(member.disabled_at)}` : '<span class="status open">Active</span>',
    timeOf(member.created_at),
    ...(owner ? [ownerActions(view, member)] : []),
  ]);
  return consolePage(
    view,
    'Members',
    `${outcome.link ? linkBox(outcome.link) : ''}
<p class="muted">${owner ? 'Owners manage members; an organization always keeps an active owner.' : 'Only owners change members.'}</p>
${table('Members', ['Email', 'Role', 'State', 'Joined', ...(owner ? [''] : [])], rows, 'No members.')}
${owner ? `${inviteForm(view, outcome.error, outcome.email)}
${requireTwoFactorForm(view)}` : ''}`,
  );
}
