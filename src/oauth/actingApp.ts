// Which installed app a request acts for, available to whatever the request writes: events and ledger
// rows name the app (DESIGN §8) without every service passing it along. Request-scoped through
// AsyncLocalStorage; outside an app's request (API keys, customers, the media plane's own clock) it is null.
import { AsyncLocalStorage } from 'node:async_hooks';

const acting = new AsyncLocalStorage<string>();

/** Runs `work` as done by the app `clientId`. */
export const actingAs = <T>(clientId: string, work: () => T): T => acting.run(clientId, work);

/** The client_id of the app the current request acts for, or null. */
export const actingApp = (): string | null => acting.getStore() ?? null;
