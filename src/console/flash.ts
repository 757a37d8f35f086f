// Post/redirect/get: a console form that changes something answers 303 to a page, so a reload never
// repeats it. What the form made that the page must show once (a key's secret, a webhook signing secret,
// an invitation link) travels beside the redirect, sealed with SECRETS_KEY, taken by the next page.
import type { AppContext } from '../http/context.js';
import type { CreatedApiKey } from '../auth/apiKeys.js';
import type { MadeLink } from '../members/links.js';
import { leaveForNextPage, takeLeftForPage } from '../members/sessions.js';
import { openText, sealText } from '../secrets/sealing.js';

export type Flash =
  | { kind: 'key'; created: CreatedApiKey }
  | { kind: 'webhookSecret'; endpointId: string; secret: string; rotated: boolean }
  | { kind: 'link'; link: MadeLink; purpose: 'invitation' | 'password_reset'; email: string }
  | { kind: 'recoveryCodes'; codes: string[] }
  | { kind: 'notice'; key: string; values?: Record<string, string | number> };

export async function leaveFlash(app: AppContext, sessionId: string, flash: Flash): Promise<void> {
  await leaveForNextPage(app.db, sessionId, sealText(JSON.stringify(flash), app.secretsKey));
}

export async function takeFlashes(app: AppContext, sessionId: string): Promise<Flash[]> {
  return (await takeLeftForPage(app.db, sessionId)).map((sealed) => JSON.parse(openText(sealed, app.secretsKey)) as Flash);
}
