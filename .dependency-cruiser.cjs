// The import graph stays layered: `npm run check:imports` (part of `npm test`) fails on a cycle or on
// an import that goes up a layer. From the top:
//   composition  src/main.ts, src/app/                          wires everything
//   http         handlers/, src/http/, src/web/, src/console/   requests, answers, pages, SSE
//   transports   src/calls/media/transports/                    connections turned into media endpoints
//   domain       calls, sessions, translation, ..., media core  rules; no HTTP, no transport
//   foundation   src/db/, src/config.ts, src/errors.ts, src/lib/, src/observability/, src/secrets/, the
//                generated contract types
// src/http/context.ts (AppContext) is the one bag of what the composition root built; services name parts of it.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle makes two modules one: cut it with an interface or move the shared part down.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'foundation-stays-down',
      severity: 'error',
      comment: 'Database, configuration, errors, small helpers, logs and metrics, and secrets know nothing of what uses them.',
      from: { path: '^src/(db/|config\\.ts|errors\\.ts|lib/|observability/|secrets/|generated/api\\.ts)' },
      to: { path: '^(handlers/|src/)', pathNot: '^src/(db/|config\\.ts|errors\\.ts|lib/|observability/|secrets/|generated/api\\.ts)' },
    },
    {
      name: 'no-async-context',
      severity: 'error',
      comment:
        'AsyncLocalStorage (node:async_hooks) turns on promise hooks for every promise of the process once it has run: ' +
        'what a request needs (its event hold, the app it acts for) is passed to it explicitly.',
      from: { path: '^(src|handlers)/' },
      to: { path: '^(node:)?async_hooks$' },
    },
    {
      name: 'domain-knows-no-http',
      severity: 'error',
      comment: 'Rules live in services: they never see requests, responses, pages or the HTTP server.',
      from: {
        path: '^src/',
        pathNot: '^src/main\\.ts$|^src/app/|^src/(http|web|console)/|^src/calls/media/transports/',
      },
      to: { path: '^handlers/|^src/(http|web|console)/|^src/main\\.ts$|^src/app/(server|expressApp|bootstrap)\\.ts$|node_modules/(@types/)?express/' },
    },
    {
      name: 'nothing-imports-the-composition-root',
      severity: 'error',
      from: { pathNot: '^src/main\\.ts$' },
      to: { path: '^src/main\\.ts$|^src/app/server\\.ts$' },
    },
    {
      name: 'media-core-knows-no-transport',
      severity: 'error',
      comment: 'Transports plug into the plane; the plane, rooms and audio stages never name one.',
      from: { path: '^src/calls/', pathNot: '^src/calls/media/transports/' },
      to: { path: '^src/calls/media/transports/' },
    },
    {
      name: 'only-the-list-names-a-transport',
      severity: 'error',
      comment:
        'Transports plug in through the list (src/calls/media/transports/index.ts) and the contract (src/calls/media/transport.ts): ' +
        'the plane, metrics, the HTTP server and the composition root name none. The one exception is the composition root ' +
        'starting the bridge between instances with Redis (where rooms live, not a way in).',
      from: { path: '^(src|handlers)/', pathNot: '^src/calls/media/transports/|^src/app/server\\.ts$' },
      to: { path: '^src/calls/media/transports/', pathNot: '^src/calls/media/transports/index\\.ts$' },
    },
    {
      name: 'the-composition-root-names-only-the-list-and-the-bridge',
      severity: 'error',
      from: { path: '^src/app/server\\.ts$' },
      to: { path: '^src/calls/media/transports/', pathNot: '^src/calls/media/transports/(index\\.ts$|bridge/)' },
    },
    {
      name: 'transports-stay-apart',
      severity: 'error',
      comment: 'One transport never reaches into another; phone transports share the phone-line base (transports/phone/), which names none.',
      from: { path: '^src/calls/media/transports/([^/]+)/' },
      to: { path: '^src/calls/media/transports/', pathNot: '^src/calls/media/transports/($1|phone)/' },
    },
    {
      name: 'metrics-are-a-leaf',
      severity: 'error',
      comment: 'Metrics register what their owners declare (a transport its own gauges); they import nothing of the project.',
      from: { path: '^src/observability/metrics\\.ts$' },
      to: { path: '^(src|handlers)/' },
    },
    {
      name: 'media-core-holds-no-database',
      severity: 'error',
      comment:
        'The plane, rooms, billing and admission reach calls and money through their ports (src/calls/media/callStore.ts), ' +
        'which the composition root fills; only transports, made with the server context, may query.',
      from: { path: '^src/calls/media/', pathNot: '^src/calls/media/(transports/|transport\\.ts$)' },
      to: { path: 'node_modules/knex/|^src/db/|^src/money/(billing|ledger|reservations)\\.ts$' },
    },
    {
      name: 'rooms-below-the-plane',
      severity: 'error',
      from: { path: '^src/calls/media/(room|audio)/' },
      to: { path: '^src/calls/media/(plane|admission)\\.ts$' },
    },
    {
      name: 'audio-stages-are-leaves',
      severity: 'error',
      comment: 'Mixers, chunkers and resamplers are pure: they import nothing of the project.',
      from: { path: '^src/calls/media/audio/' },
      to: { path: '^src/', pathNot: '^src/calls/media/audio/' },
    },
    {
      name: 'events-know-no-domain',
      severity: 'error',
      comment: 'The event log and bus carry what calls, sessions and webhooks emit and queue; they do not import them (the statements that store events and queue deliveries are src/db/events.ts).',
      from: { path: '^src/events/' },
      to: { path: '^src/(calls|sessions|translation|transcription|interpretation|money|organizations|webhooks)/' },
    },
    {
      name: 'tests-and-tools-are-not-imported',
      severity: 'error',
      from: { path: '^(src|handlers)/' },
      to: { path: '^(test|bench|fuzz|contract-tests|codegen)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^data/' },
    // Type-only imports count too: a layer that names another's types depends on it.
    moduleSystems: ['es6', 'cjs'],
  },
};
