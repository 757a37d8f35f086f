// The session's event stream read with fetch (an EventSource cannot send the key header): a parser of
// the text/event-stream format, and a loop that reconnects with backoff, resuming from Last-Event-ID.

const STREAM_IDLE_MS = 45 * 1000; // heartbeats come every 15 s; silence this long means a dead connection
const HELD_MS = 10 * 1000; // a stream open this long counts as a connection that held (backoff starts again)

/** feed(text) of a streaming parser of server-sent events (WHATWG): `onEvent({ id, type, data })`, `onActivity()` on every byte. */
export function sseParser(onEvent, onActivity) {
  let buffer = '';
  let data = [];
  let type = '';
  let id = null;

  function dispatch() {
    if (data.length) onEvent({ id, type: type || 'message', data: data.join('\n') });
    data = [];
    type = '';
    id = null;
  }

  function line(text) {
    if (text === '') return dispatch();
    if (text[0] === ':') return; // a comment: a heartbeat
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') type = value;
    else if (field === 'id' && !value.includes('\u0000')) id = value;
    // `retry` and unknown fields: our own backoff decides.
  }

  return function feed(chunk) {
    onActivity();
    buffer += chunk;
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const c = buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      if (c === 13 && i === buffer.length - 1) break; // a CR at the end: wait to see whether LF follows
      line(buffer.slice(start, i));
      if (c === 13 && buffer.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
    }
    buffer = buffer.slice(start);
  };
}

/**
 * Keeps the stream open until `stop()`: `onOpen()` when it (re)opens, `onEvent(type, data)` per event,
 * `onLost()` when it broke, `stillValid()` (the link still works?) after the server ended or refused it.
 */
export function eventStream(api, retry, { onOpen, onEvent, onLost, stillValid }) {
  let stopped = true;
  let abort = null;
  let lastEventId = null;

  async function read(body, controller) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let lastActivity = Date.now();
    const feed = sseParser((event) => {
      if (event.id !== null) lastEventId = event.id;
      let payload;
      try {
        payload = JSON.parse(event.data);
      } catch {
        return;
      }
      if (payload && typeof payload === 'object') onEvent(payload.type || event.type, payload.data);
    }, () => (lastActivity = Date.now()));
    const watchdog = setInterval(() => {
      if (Date.now() - lastActivity > STREAM_IDLE_MS) controller.abort();
    }, 5000);
    try {
      for (;;) {
        const step = await reader.read();
        if (step.done) return feed(decoder.decode());
        feed(decoder.decode(step.value, { stream: true }));
      }
    } finally {
      clearInterval(watchdog);
    }
  }

  async function run() {
    stopped = false;
    while (!stopped) {
      const controller = new AbortController();
      abort = controller;
      let mustCheck = false;
      let openedAt = 0;
      try {
        const headers = { Accept: 'text/event-stream' };
        if (lastEventId) headers['Last-Event-ID'] = lastEventId;
        const response = await api.fetchRaw('/stream', { headers, signal: controller.signal });
        if (response.status === 401 || response.status === 404) {
          mustCheck = true;
        } else if (response.ok && response.body) {
          openedAt = Date.now();
          onOpen();
          await read(response.body, controller);
          mustCheck = true; // the server ended the stream: the link may have been replaced
        }
      } catch {
        // offline, aborted or a broken connection
      }
      if (stopped) break;
      if (openedAt && Date.now() - openedAt > HELD_MS) retry.reset();
      onLost();
      if (mustCheck && !(await stillValid())) break;
      if (stopped) break;
      await retry.wait(retry.next());
    }
    abort = null;
  }

  function stop() {
    stopped = true;
    if (abort) abort.abort();
    retry.wake();
  }

  return { run, stop };
}
