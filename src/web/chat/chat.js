// The customer's side of a support chat: opened from a session's customer_url
// (`/chat/{session_id}#k=<key>`). Plain browser JavaScript, no build step, nothing fetched from
// elsewhere. Every call to the server carries the key from the fragment as `X-Chat-Key`. The page's
// own words come from the shared catalogue, in the customer's language once known.
import { translateDocument } from '/page-i18n/catalogue.js';

(function () {
  'use strict';

  var TYPING_SHOW_MS = 4000; // how long "<agent> is typing…" stays after the last typing event
  var TYPING_SEND_EVERY_MS = 2000; // at most one typing announcement per this interval
  var MAX_RECORDING_MS = 115 * 1000; // the server accepts up to two minutes; stop a little before
  var MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
  var STREAM_IDLE_MS = 45 * 1000; // heartbeats come every 15 s; silence this long means a dead connection
  var BACKOFF_MAX_MS = 30 * 1000;
  var HISTORY_LIMIT = 100;
  var CATCH_UP_LIMIT = 200;

  function $(id) { return document.getElementById(id); }

  var words = translateDocument(document, navigator.language);

  var els = {
    app: $('app'),
    main: $('main'),
    loading: $('loading'),
    invalid: $('invalid-link'),
    invalidTitle: $('invalid-title'),
    invalidText: $('invalid-text'),
    messages: $('messages'),
    agentName: $('agent-name'),
    company: $('company'),
    avatar: $('agent-avatar'),
    connection: $('connection'),
    typing: $('typing'),
    typingText: $('typing-text'),
    closedBanner: $('closed-banner'),
    closedWhen: $('closed-when'),
    notice: $('notice'),
    noticeText: $('notice-text'),
    noticeClose: $('notice-close'),
    composer: $('composer'),
    input: $('composer-input'),
    send: $('send-button'),
    record: $('record-button'),
    recording: $('recording'),
    recordingText: $('recording-text'),
    cancelRecording: $('cancel-recording'),
  };

  // ---- where we are -------------------------------------------------------------------------

  function readSessionId() {
    var parts = location.pathname.split('/').filter(Boolean);
    var at = parts.indexOf('chat');
    var raw = at >= 0 ? parts[at + 1] : parts[parts.length - 1];
    try { return raw ? decodeURIComponent(raw) : ''; } catch (e) { return ''; }
  }

  function readKey() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ''));
    return (params.get('k') || '').trim();
  }

  var sessionId = readSessionId();
  var key = readKey();
  var base = '/chat/public/' + encodeURIComponent(sessionId);

  var state = {
    session: null,
    closed: false,
    invalid: false,
    messages: new Map(), // id -> <li>
    maxId: 0,
    lastEventId: null,
    streamAbort: null,
    streamStopped: false,
    attempt: 0,
    wake: null, // ends the current backoff wait early (when the browser comes back online)
    sending: false,
    lastTypingSentAt: 0,
    typingTimer: null,
    noticeTimer: null,
    connectionTimer: null,
    recorder: null, // { recorder, stream, chunks, startedAt, timer, discard, mimeType }
    uploading: false,
    audioObserver: null,
  };

  // ---- talking to the server ----------------------------------------------------------------

  function headers(extra) {
    var h = { 'X-Chat-Key': key };
    if (extra) for (var name in extra) h[name] = extra[name];
    return h;
  }

  /** Calls the API; resolves to { status, ok, data } (never rejects for HTTP errors; rejects when offline). */
  function api(path, options) {
    options = options || {};
    var init = { method: options.method || 'GET', headers: headers({ Accept: 'application/json' }), cache: 'no-store' };
    if (options.json !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(options.json);
    } else if (options.body !== undefined) {
      init.body = options.body;
    }
    return fetch(base + path, init).then(function (response) {
      var type = response.headers.get('Content-Type') || '';
      var parse = type.indexOf('json') >= 0 ? response.json().catch(function () { return null; }) : Promise.resolve(null);
      return parse.then(function (data) { return { status: response.status, ok: response.ok, data: data }; });
    });
  }

  /** The `detail` of an error answer as one readable sentence. */
  function detailOf(result) {
    var detail = result && result.data && result.data.detail;
    if (typeof detail === 'string') return detail;
    if (Array.isArray(detail)) {
      return detail.map(function (item) {
        if (!item || typeof item !== 'object') return String(item);
        var where = Array.isArray(item.loc) ? item.loc.filter(function (p) { return p !== 'body'; }).join('.') : '';
        return (where ? where + ': ' : '') + (item.msg || item.type || 'invalid');
      }).join('; ');
    }
    return '';
  }

  function errorText(action, result) {
    var detail = detailOf(result);
    var why;
    switch (result.status) {
      case 402: why = 'the service is not available for this company at the moment'; break;
      case 409: why = 'the conversation does not accept new messages'; break;
      case 413: why = 'the recording is too large (at most 10 MB)'; break;
      case 422: why = 'it was not accepted'; break;
      case 429: why = 'too many requests; please wait a moment'; break;
      case 502: why = 'a translation service did not answer; please try again'; break;
      default: why = result.status >= 500 ? 'the server had a problem; please try again' : 'error ' + result.status;
    }
    return action + ': ' + why + (detail ? ' (' + detail + ')' : '') + '.';
  }

  /** Reacts to an error answer; returns true when the page changed state (invalid link, closed). */
  function handleFailure(action, result) {
    if (result.status === 401) { goInvalid('replaced'); return true; }
    if (result.status === 404) { checkSession(); }
    if (result.status === 409) { checkSession(); }
    showNotice(errorText(action, result));
    return false;
  }

  function offlineText(action) {
    return action + ': the connection to the server failed. Please check your connection and try again.';
  }

  // ---- small helpers ------------------------------------------------------------------------

  function sleep(ms) {
    return new Promise(function (resolve) {
      var timer = setTimeout(done, ms);
      function done() { clearTimeout(timer); if (state.wake === done) state.wake = null; resolve(); }
      state.wake = done;
    });
  }

  function backoffDelay() {
    state.attempt += 1;
    var ms = Math.min(BACKOFF_MAX_MS, 1000 * Math.pow(2, state.attempt - 1));
    return Math.round(ms * (0.75 + Math.random() * 0.5));
  }

  function formatTime(iso) {
    var d = new Date(iso);
    if (isNaN(d.getTime())) return '';
    return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  }

  function formatDateTime(iso) {
    var d = new Date(iso);
    if (isNaN(d.getTime())) return '';
    return d.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
  }

  function formatDuration(seconds) {
    var s = Math.max(0, Math.round(seconds));
    return Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0');
  }

  function agentDisplayName() {
    return (state.session && state.session.agent_name) || 'Support';
  }

  function isNearBottom() {
    var m = els.main;
    return m.scrollHeight - m.scrollTop - m.clientHeight < 120;
  }

  function scrollToBottom() {
    els.main.scrollTop = els.main.scrollHeight;
  }

  // ---- notices and connection status --------------------------------------------------------

  function showNotice(text) {
    if (state.invalid) return;
    els.noticeText.textContent = text;
    els.notice.hidden = false;
    clearTimeout(state.noticeTimer);
    state.noticeTimer = setTimeout(hideNotice, 15000);
  }

  function hideNotice() {
    clearTimeout(state.noticeTimer);
    els.notice.hidden = true;
    els.noticeText.textContent = '';
  }

  function setConnection(text, delayMs) {
    clearTimeout(state.connectionTimer);
    if (!text) { els.connection.textContent = ''; els.connection.hidden = true; return; }
    state.connectionTimer = setTimeout(function () {
      els.connection.textContent = text;
      els.connection.hidden = false;
    }, delayMs || 0);
  }

  // ---- session ------------------------------------------------------------------------------

  function applySession(s) {
    if (!s || typeof s !== 'object') return;
    var prev = state.session || {};
    var next = {};
    for (var k in prev) next[k] = prev[k];
    ['id', 'company', 'status', 'agent_name', 'agent_language', 'customer_name', 'customer_language', 'closed_at'].forEach(function (field) {
      if (s[field] !== undefined) next[field] = s[field];
    });
    state.session = next;
    if (next.customer_language && next.customer_language !== prev.customer_language) {
      words = translateDocument(document, next.customer_language);
      updateComposer();
    }

    var agent = agentDisplayName();
    els.agentName.textContent = agent;
    els.company.textContent = next.company || '';
    els.company.hidden = !next.company;
    els.avatar.textContent = agent.trim().charAt(0).toUpperCase() || '?';
    document.title = 'Chat with ' + agent + (next.company ? ' – ' + next.company : '');

    if (next.status === 'closed') setClosed(next.closed_at);
  }

  /** Asks the server whether the link still works; returns true when the chat can go on streaming. */
  function checkSession() {
    if (state.invalid) return Promise.resolve(false);
    return api('').then(function (result) {
      if (result.status === 401) { goInvalid('replaced'); return false; }
      if (result.status === 404) { goInvalid('notfound'); return false; }
      if (!result.ok) return true;
      applySession(result.data);
      return !state.closed;
    }, function () { return true; });
  }

  function showChat() {
    els.loading.hidden = true;
    els.messages.hidden = false;
    els.composer.hidden = false;
    els.app.removeAttribute('aria-busy');
  }

  function setClosed(closedAt) {
    if (state.invalid) return;
    var first = !state.closed;
    state.closed = true;
    if (state.session) state.session.status = 'closed';
    var when = closedAt ? formatDateTime(closedAt) : '';
    els.closedWhen.textContent = when ? '(' + when + ')' : '';
    els.closedBanner.hidden = false;
    hideTyping();
    if (state.recorder) stopRecording(true);
    updateComposer();
    stopStream();
    setConnection('');
    if (first && isNearBottom()) scrollToBottom();
  }

  function goInvalid(kind) {
    if (state.invalid) return;
    state.invalid = true;
    stopStream();
    if (state.recorder) stopRecording(true);
    hideTyping();
    hideNotice();
    setConnection('');
    if (kind === 'missing') {
      els.invalidTitle.textContent = 'This chat link is not valid';
      els.invalidText.textContent = 'The link is incomplete. Please open the full link you received from the support team.';
    } else if (kind === 'notfound') {
      els.invalidTitle.textContent = 'This chat could not be found';
      els.invalidText.textContent = 'The conversation may have been deleted, or the link is incomplete. Please contact the support team if you need help.';
    }
    // The conversation is no longer this link's to show.
    els.messages.textContent = '';
    state.messages.clear();
    els.messages.hidden = true;
    els.composer.hidden = true;
    els.closedBanner.hidden = true;
    els.loading.hidden = true;
    els.invalid.hidden = false;
    els.app.removeAttribute('aria-busy');
    document.title = els.invalidTitle.textContent;
  }

  // ---- messages -----------------------------------------------------------------------------

  function addMessages(list, forceScroll) {
    if (!Array.isArray(list) || state.invalid) return;
    var stick = forceScroll || isNearBottom();
    var added = false;
    list.forEach(function (m) { if (addMessage(m)) added = true; });
    if (added && stick) scrollToBottom();
  }

  function addMessage(m) {
    if (!m || typeof m.id !== 'number' || state.messages.has(m.id)) return false;
    var li = renderMessage(m);
    state.messages.set(m.id, li);
    // Messages arrive almost always in order; keep the list sorted by id anyway.
    var after = null;
    var node = els.messages.lastElementChild;
    while (node && Number(node.getAttribute('data-message-id')) > m.id) node = node.previousElementSibling;
    after = node;
    if (after) after.insertAdjacentElement('afterend', li);
    else els.messages.insertBefore(li, els.messages.firstChild);
    if (m.id > state.maxId) state.maxId = m.id;
    return true;
  }

  function el(tag, className, text) {
    var e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function renderMessage(m) {
    var mine = m.sender === 'customer';
    var li = el('li', 'message ' + (mine ? 'from-customer' : 'from-agent'));
    li.setAttribute('data-testid', 'message');
    li.setAttribute('data-message-id', String(m.id));
    li.setAttribute('data-sender', m.sender || '');
    li.setAttribute('data-kind', m.kind || 'text');

    var bubble = el('div', 'bubble');
    var author = mine ? 'You' : (m.author_name || agentDisplayName());
    bubble.appendChild(el('p', 'author', author));

    if (m.kind === 'voice') bubble.appendChild(renderVoice(m, author));

    var shown = typeof m.customer_text === 'string' && m.customer_text !== '' ? m.customer_text : (m.text || '');
    var text = el('p', 'text', shown);
    text.setAttribute('data-testid', 'message-text');
    var lang = mine ? m.language : (state.session && state.session.customer_language);
    if (lang) text.lang = lang;
    bubble.appendChild(text);

    if (typeof m.text === 'string' && m.text !== '' && m.text !== shown) {
      var details = el('details', 'original');
      var summary = el('summary', null, 'Show original' + (m.language ? ' (' + String(m.language).toUpperCase() + ')' : ''));
      var original = el('p', null, m.text);
      original.setAttribute('data-testid', 'message-original');
      if (m.language) original.lang = m.language;
      details.appendChild(summary);
      details.appendChild(original);
      bubble.appendChild(details);
    }

    var meta = el('p', 'meta');
    var time = el('time', null, formatTime(m.created_at));
    if (m.created_at) {
      time.dateTime = m.created_at;
      time.title = formatDateTime(m.created_at);
    }
    meta.appendChild(time);
    bubble.appendChild(meta);
    li.appendChild(bubble);
    return li;
  }

  function renderVoice(m, author) {
    var box = el('div', 'voice');
    var label = 'Voice message' + (typeof m.duration_seconds === 'number' ? ' · ' + formatDuration(m.duration_seconds) : '');
    box.appendChild(el('span', 'voice-label', label));
    if (m.audio_url === null) {
      box.appendChild(el('span', 'voice-missing', 'The recording is no longer available.'));
      return box;
    }
    var audio = document.createElement('audio');
    audio.controls = true;
    audio.preload = 'metadata';
    audio.setAttribute('data-testid', 'audio-player');
    audio.setAttribute('data-message-id', String(m.id));
    audio.setAttribute('aria-label', 'Voice message from ' + author);
    box.appendChild(audio);
    watchAudio(audio);
    return box;
  }

  // Recordings are fetched with the key (an <audio src> cannot send headers) when they come into view.
  function watchAudio(audio) {
    if (!('IntersectionObserver' in window)) { loadAudio(audio); return; }
    if (!state.audioObserver) {
      state.audioObserver = new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (entry.isIntersecting) {
            state.audioObserver.unobserve(entry.target);
            loadAudio(entry.target);
          }
        });
      }, { root: els.main, rootMargin: '400px 0px' });
    }
    state.audioObserver.observe(audio);
  }

  function loadAudio(audio) {
    if (audio.getAttribute('data-state')) return;
    audio.setAttribute('data-state', 'loading');
    var id = audio.getAttribute('data-message-id');
    fetch(base + '/messages/' + encodeURIComponent(id) + '/audio', { headers: headers(), cache: 'no-store' })
      .then(function (response) {
        if (response.status === 401) { goInvalid('replaced'); return null; }
        if (!response.ok) throw new Error('HTTP ' + response.status);
        return response.blob();
      })
      .then(function (blob) {
        if (!blob) return;
        fixUnknownDuration(audio);
        audio.src = URL.createObjectURL(blob);
        audio.setAttribute('data-state', 'ready');
      })
      .catch(function () {
        audio.setAttribute('data-state', 'failed');
        var missing = el('span', 'voice-missing', 'The recording could not be loaded.');
        audio.replaceWith(missing);
      });
  }

  // Browser recordings (WebM from MediaRecorder) carry no duration: seek far ahead once so the
  // player learns it, then go back to the start.
  function fixUnknownDuration(audio) {
    audio.addEventListener('loadedmetadata', function () {
      if (audio.duration !== Infinity) return;
      audio.addEventListener('durationchange', function back() {
        if (audio.duration === Infinity) return;
        audio.removeEventListener('durationchange', back);
        audio.currentTime = 0;
      });
      audio.currentTime = 1e101;
    }, { once: true });
  }

  function loadHistory() {
    return api('/messages?after=0&limit=' + HISTORY_LIMIT).then(function (result) {
      if (!result.ok) { handleFailure('The conversation could not be loaded', result); return; }
      addMessages(result.data && result.data.messages, true);
    }, function () {
      showNotice(offlineText('The conversation could not be loaded'));
    });
  }

  /** Fetches what may have been posted while the stream was not connected. */
  function catchUp() {
    var after = state.maxId;
    return api('/messages?after=' + after + '&limit=' + CATCH_UP_LIMIT).then(function (result) {
      if (!result.ok || !result.data || !Array.isArray(result.data.messages)) return;
      addMessages(result.data.messages, false);
      if (result.data.messages.length === CATCH_UP_LIMIT && state.maxId > after) return catchUp();
    }, function () { /* the stream reconnect will try again */ });
  }

  // ---- typing -------------------------------------------------------------------------------

  function showTyping(name) {
    if (state.closed || state.invalid) return;
    els.typingText.textContent = (name || agentDisplayName()) + ' is typing…';
    els.typing.hidden = false;
    clearTimeout(state.typingTimer);
    state.typingTimer = setTimeout(hideTyping, TYPING_SHOW_MS);
  }

  function hideTyping() {
    clearTimeout(state.typingTimer);
    els.typing.hidden = true;
  }

  function announceTyping() {
    if (state.closed || state.invalid || !els.input.value.trim()) return;
    var now = Date.now();
    if (now - state.lastTypingSentAt < TYPING_SEND_EVERY_MS) return;
    state.lastTypingSentAt = now;
    api('/typing', { method: 'POST' }).then(function (result) {
      // Typing is a courtesy: only a lost link or a closed chat matter here.
      if (result.status === 401 || result.status === 404 || result.status === 409) checkSession();
    }, function () { /* offline: the stream's reconnect reports it */ });
  }

  // ---- the event stream (fetch + a parser of the text/event-stream format) -------------------

  /** Returns feed(text) for a streaming parser of server-sent events (WHATWG format). */
  function createSseParser(onEvent, onActivity) {
    var buffer = '';
    var data = [];
    var type = '';
    var id = null;

    function dispatch() {
      if (id !== null) state.lastEventId = id;
      if (data.length) onEvent({ id: id, type: type || 'message', data: data.join('\n') });
      data = [];
      type = '';
      id = null;
    }

    function line(text) {
      if (text === '') { dispatch(); return; }
      if (text.charAt(0) === ':') { onActivity(); return; } // a comment: heartbeat
      var colon = text.indexOf(':');
      var field = colon < 0 ? text : text.slice(0, colon);
      var value = colon < 0 ? '' : text.slice(colon + 1);
      if (value.charAt(0) === ' ') value = value.slice(1);
      if (field === 'data') data.push(value);
      else if (field === 'event') type = value;
      else if (field === 'id') { if (value.indexOf('\u0000') < 0) id = value; }
      // `retry` and unknown fields: our own backoff decides.
    }

    return function feed(chunk) {
      onActivity();
      buffer += chunk;
      var start = 0;
      for (var i = 0; i < buffer.length; i++) {
        var c = buffer.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        if (c === 13 && i === buffer.length - 1) break; // a CR at the end: wait to see whether LF follows
        line(buffer.slice(start, i));
        if (c === 13 && buffer.charCodeAt(i + 1) === 10) i++;
        start = i + 1;
      }
      buffer = buffer.slice(start);
    };
  }

  function handleEvent(event) {
    var payload;
    try { payload = JSON.parse(event.data); } catch (e) { return; }
    if (!payload || typeof payload !== 'object') return;
    var type = payload.type || event.type;
    var data = payload.data;
    switch (type) {
      case 'message.created':
        if (data && data.sender === 'agent') hideTyping();
        addMessages([data], data && data.sender === 'customer');
        break;
      case 'session.typing':
        if (data && data.sender === 'agent') showTyping(data.author_name);
        break;
      case 'session.updated':
        applySession(data);
        break;
      case 'session.closed':
        applySession(data);
        setClosed(data && data.closed_at);
        break;
      case 'session.deleted':
        checkSession();
        break;
      default:
        break;
    }
  }

  function readStream(body, abort) {
    var reader = body.getReader();
    var decoder = new TextDecoder();
    var lastActivity = Date.now();
    var feed = createSseParser(handleEvent, function () { lastActivity = Date.now(); });
    var watchdog = setInterval(function () {
      if (Date.now() - lastActivity > STREAM_IDLE_MS) abort.abort();
    }, 5000);
    function pump() {
      return reader.read().then(function (step) {
        if (step.done) { feed(decoder.decode()); return; }
        feed(decoder.decode(step.value, { stream: true }));
        return pump();
      });
    }
    return pump().finally(function () { clearInterval(watchdog); });
  }

  function stopStream() {
    state.streamStopped = true;
    if (state.streamAbort) state.streamAbort.abort();
    if (state.wake) state.wake();
  }

  async function runStream() {
    state.streamStopped = false;
    while (!state.streamStopped && !state.invalid && !state.closed) {
      var abort = new AbortController();
      state.streamAbort = abort;
      var mustCheck = false;
      var openedAt = 0;
      try {
        var h = headers({ Accept: 'text/event-stream' });
        if (state.lastEventId) h['Last-Event-ID'] = state.lastEventId;
        var response = await fetch(base + '/stream', { headers: h, signal: abort.signal, cache: 'no-store' });
        if (response.status === 401 || response.status === 404) {
          mustCheck = true;
        } else if (response.ok && response.body) {
          openedAt = Date.now();
          setConnection('');
          // What changed before the stream began is not in it: the messages posted meanwhile, and the
          // session's own state (closed while the page was loading or reconnecting).
          catchUp();
          checkSession();
          await readStream(response.body, abort);
          mustCheck = true; // the server ended the stream: the link may have been replaced
        }
      } catch (e) {
        // offline, aborted or a broken connection
      }
      if (state.streamStopped || state.invalid || state.closed) break;
      if (openedAt && Date.now() - openedAt > 10000) state.attempt = 0;
      setConnection('Connection lost. Reconnecting…', 1500);
      if (mustCheck && !(await checkSession())) break;
      if (state.streamStopped || state.invalid || state.closed) break;
      await sleep(backoffDelay());
    }
    state.streamAbort = null;
  }

  // ---- composer -----------------------------------------------------------------------------

  function updateComposer() {
    var closed = state.closed || state.invalid;
    var recording = !!state.recorder;
    els.input.disabled = closed;
    els.input.hidden = recording || state.uploading;
    els.send.disabled = closed || state.sending || recording || state.uploading;
    els.record.disabled = closed || state.uploading || !canRecord();
    els.record.classList.toggle('recording', recording);
    els.record.setAttribute('aria-pressed', recording ? 'true' : 'false');
    var recordLabel = recording ? 'Stop recording and send' : (canRecord() ? words.t('chat.record') : recordUnavailableReason());
    els.record.setAttribute('aria-label', recordLabel);
    els.record.title = recordLabel;
    els.recording.hidden = !recording && !state.uploading;
    els.cancelRecording.hidden = !recording;
    els.input.placeholder = closed ? words.t('chat.closed') : words.t('chat.placeholder');
    els.composer.classList.toggle('disabled', closed);
  }

  function autoResize() {
    els.input.style.height = 'auto';
    els.input.style.height = Math.min(els.input.scrollHeight, 160) + 'px';
  }

  function send() {
    var text = els.input.value.trim();
    if (!text || state.sending || state.closed || state.invalid) return;
    state.sending = true;
    els.input.value = '';
    autoResize();
    updateComposer();
    api('/messages', { method: 'POST', json: { text: text } }).then(function (result) {
      if (result.status === 201 || result.ok) {
        hideNotice();
        addMessages([result.data], true);
        return;
      }
      restore();
      handleFailure('Your message could not be sent', result);
    }, function () {
      restore();
      showNotice(offlineText('Your message could not be sent'));
    }).finally(function () {
      state.sending = false;
      updateComposer();
    });
    function restore() {
      if (!els.input.value) { els.input.value = text; autoResize(); }
    }
  }

  // ---- voice messages -----------------------------------------------------------------------

  function canRecord() {
    return !!(window.isSecureContext && navigator.mediaDevices && navigator.mediaDevices.getUserMedia && window.MediaRecorder);
  }

  function recordUnavailableReason() {
    if (!window.isSecureContext) return 'Voice messages need a secure (https) connection';
    return 'Voice messages are not supported by this browser';
  }

  function pickMimeType() {
    var candidates = ['audio/webm;codecs=opus', 'audio/mp4', 'audio/webm', 'audio/ogg;codecs=opus'];
    for (var i = 0; i < candidates.length; i++) {
      if (MediaRecorder.isTypeSupported && MediaRecorder.isTypeSupported(candidates[i])) return candidates[i];
    }
    return '';
  }

  function extensionFor(type) {
    if (/webm/i.test(type)) return 'webm';
    if (/mp4|m4a|aac/i.test(type)) return 'm4a';
    if (/ogg/i.test(type)) return 'ogg';
    if (/mpeg|mp3/i.test(type)) return 'mp3';
    if (/wav/i.test(type)) return 'wav';
    return 'webm';
  }

  function toggleRecording() {
    if (state.recorder) stopRecording(false);
    else startRecording();
  }

  async function startRecording() {
    if (state.closed || state.invalid || state.uploading || state.recorder) return;
    if (!canRecord()) { showNotice(recordUnavailableReason() + '.'); return; }
    hideNotice();
    els.record.disabled = true;
    var stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
    } catch (e) {
      var name = e && e.name;
      showNotice(name === 'NotAllowedError' || name === 'SecurityError'
        ? 'Microphone access was blocked. Allow it in your browser to record a voice message.'
        : name === 'NotFoundError' ? 'No microphone was found.' : 'The microphone could not be started.');
      updateComposer();
      return;
    }
    if (state.closed || state.invalid) { stream.getTracks().forEach(function (t) { t.stop(); }); return; }
    var mimeType = pickMimeType();
    var recorder;
    try {
      recorder = new MediaRecorder(stream, mimeType ? { mimeType: mimeType } : undefined);
    } catch (e) {
      stream.getTracks().forEach(function (t) { t.stop(); });
      showNotice('Voice messages are not supported by this browser.');
      updateComposer();
      return;
    }
    var rec = { recorder: recorder, stream: stream, chunks: [], startedAt: Date.now(), timer: null, discard: false, mimeType: mimeType };
    recorder.ondataavailable = function (e) { if (e.data && e.data.size) rec.chunks.push(e.data); };
    recorder.onstop = function () { finishRecording(rec); };
    recorder.onerror = function () { rec.discard = true; showNotice('The recording failed.'); };
    state.recorder = rec;
    recorder.start(1000);
    rec.timer = setInterval(tick, 250);
    tick();
    updateComposer();
    els.record.focus();

    function tick() {
      var elapsed = Date.now() - rec.startedAt;
      els.recordingText.textContent = 'Recording ' + formatDuration(elapsed / 1000) + ' / ' + formatDuration(MAX_RECORDING_MS / 1000);
      if (elapsed >= MAX_RECORDING_MS) stopRecording(false);
    }
  }

  /** Stops the recorder; the recording is sent unless `discard`. */
  function stopRecording(discard) {
    var rec = state.recorder;
    if (!rec) return;
    state.recorder = null;
    rec.discard = rec.discard || discard;
    clearInterval(rec.timer);
    if (!rec.discard) {
      state.uploading = true;
      els.recordingText.textContent = 'Sending voice message…';
    }
    updateComposer();
    try { if (rec.recorder.state !== 'inactive') rec.recorder.stop(); else finishRecording(rec); } catch (e) { finishRecording(rec); }
  }

  function finishRecording(rec) {
    if (rec.finished) return;
    rec.finished = true;
    rec.stream.getTracks().forEach(function (t) { t.stop(); });
    if (rec.discard) { state.uploading = false; updateComposer(); return; }
    var type = rec.recorder.mimeType || rec.mimeType || (rec.chunks[0] && rec.chunks[0].type) || 'audio/webm';
    var blob = new Blob(rec.chunks, { type: type });
    if (!blob.size) { done(); showNotice('Nothing was recorded. Please try again.'); return; }
    if (blob.size > MAX_UPLOAD_BYTES) { done(); showNotice('The recording is too large to send (at most 10 MB).'); return; }
    var form = new FormData();
    form.append('audio', blob, 'voice-message.' + extensionFor(type));
    api('/voice', { method: 'POST', body: form }).then(function (result) {
      done();
      if (result.ok) { hideNotice(); addMessages([result.data], true); return; }
      handleFailure('Your voice message could not be sent', result);
    }, function () {
      done();
      showNotice(offlineText('Your voice message could not be sent'));
    });
    function done() {
      state.uploading = false;
      updateComposer();
    }
  }

  // ---- wiring -------------------------------------------------------------------------------

  els.composer.addEventListener('submit', function (e) { e.preventDefault(); send(); });
  els.input.addEventListener('keydown', function (e) {
    if (e.key === 'Enter' && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey && !e.isComposing && e.keyCode !== 229) {
      e.preventDefault();
      send();
    }
  });
  els.input.addEventListener('input', function () { autoResize(); announceTyping(); });
  els.record.addEventListener('click', toggleRecording);
  els.cancelRecording.addEventListener('click', function () { stopRecording(true); els.input.focus(); });
  els.noticeClose.addEventListener('click', hideNotice);
  window.addEventListener('online', function () { if (state.wake) state.wake(); });
  window.addEventListener('hashchange', function () {
    var next = readKey();
    if (next && next !== key) location.reload();
  });

  async function start() {
    updateComposer();
    if (!sessionId || !key) { goInvalid('missing'); return; }
    var result;
    for (;;) {
      try {
        result = await api('');
        if (result.ok || result.status === 401 || result.status === 404) break;
        els.loading.textContent = 'The chat could not be opened (error ' + result.status + '). Trying again…';
      } catch (e) {
        els.loading.textContent = 'The chat could not be reached. Trying again…';
      }
      await sleep(backoffDelay());
    }
    state.attempt = 0;
    if (result.status === 401) { goInvalid('replaced'); return; }
    if (result.status === 404) { goInvalid('notfound'); return; }
    applySession(result.data);
    showChat();
    updateComposer();
    await loadHistory();
    if (state.invalid) return;
    scrollToBottom();
    if (!state.closed) {
      els.input.focus({ preventScroll: true });
      runStream();
    }
  }

  start();
})();
