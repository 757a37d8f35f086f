import { defineHandler } from '../../src/http/handler.js';
import { getAccount } from '../../src/organizations/account.js';

export default defineHandler<'getAccount'>(async ({ app, principal }) => ({
  status: 200,
  body: await getAccount(app.db, principal),
}));
