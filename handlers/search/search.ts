import { defineHandler } from '../../src/http/handler.js';
import { search, searchableKinds } from '../../src/search/search.js';

export default defineHandler<'search'>(async ({ app, principal, query }) => ({
  status: 200,
  body: await search(app.db, principal, query.q, searchableKinds(principal.scopes, query.kind), query.limit ?? 20, query.after),
}));
