// The customer's side of a support chat, opened from a session's customer_url
// (`/chat/{session_id}#k=<key>`). ES modules served as they are (no build step), nothing fetched from
// elsewhere; every call to the server carries the fragment's key as `X-Chat-Key`. Every word the
// customer reads comes from the shared catalogue, in the customer's language once known (the browser's
// until then), right to left where that language is.
import { translateDocument } from '/page-i18n/catalogue.js';
import { idFromPath, keyFromFragment, publicApi } from '/page-shared/api.js';
import { backoff } from '/page-shared/backoff.js';
import { notice } from '/page-shared/notice.js';
import { conversation } from './messages.js';
import { canRecord, cannotRecordReason, voiceRecorder } from './recorder.js';
import { eventStream } from './stream.js';

const TYPING_SHOW_MS = 4000; // how long "<agent> is typing…" stays after the last typing event
const TYPING_SEND_EVERY_MS = 2000; // at most one typing announcement per this interval
const NOTICE_MS = 15000;
const HISTORY_LIMIT = 100;
const CATCH_UP_LIMIT = 200;
// The browser's language goes with each message as a hint: what a first message too short to detect
// ("Hola") is in. Only a tag the contract takes, so an odd browser setting never costs a message.
const LANGUAGE_TAG = /^(?=.{2,35}$)[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$/;
const languageHint = () => (LANGUAGE_TAG.test(navigator.language || '') ? navigator.language : null);

const $ = (id) => document.getElementById(id);
const els = {
  app: $('app'), main: $('main'), loading: $('loading'), invalid: $('invalid-link'), invalidTitle: $('invalid-title'),
  invalidText: $('invalid-text'), messages: $('messages'), agentName: $('agent-name'), company: $('company'), avatar: $('agent-avatar'),
  connection: $('connection'), typing: $('typing'), typingText: $('typing-text'), closedBanner: $('closed-banner'), closedWhen: $('closed-when'),
  notice: $('notice'), noticeText: $('notice-text'), noticeClose: $('notice-close'), composer: $('composer'), input: $('composer-input'),
  send: $('send-button'), record: $('record-button'), recording: $('recording'), recordingText: $('recording-text'), cancelRecording: $('cancel-recording'),
};

const sessionId = idFromPath('chat');
const key = keyFromFragment();
const api = publicApi(`/chat/public/${encodeURIComponent(sessionId)}`, 'X-Chat-Key', key);
const retry = backoff({ firstMs: 1000, maxMs: 30000 });

let words = translateDocument(document, navigator.language);
const t = (name, values) => words.t(name, values);
const state = { session: null, closed: false, invalid: false, sending: false, lastTypingSentAt: 0, typingTimer: null, connectionTimer: null };

const agentName = () => (state.session && state.session.agent_name) || t('chat.support');
const messages = conversation(els.messages, els.main, {
  words: () => words,
  agentName,
  customerLanguage: () => state.session && state.session.customer_language,
  async fetchAudio(id) {
    const response = await api.fetchRaw(`/messages/${encodeURIComponent(id)}/audio`);
    if (response.status !== 401) return response;
    goInvalid('replaced');
    return null;
  },
});
const alert = notice(els.notice, { textElement: els.noticeText, autoHideMs: NOTICE_MS });
const showNotice = (text) => state.invalid || alert.show(text);
const recorder = voiceRecorder({
  t,
  showNotice,
  showProgress: (text) => (els.recordingText.textContent = text),
  changed: updateComposer,
  mayRecord: () => !state.closed && !state.invalid,
  async upload(form) {
    const hint = languageHint();
    if (hint) form.append('language_hint', hint);
    await submit(t('chat.voiceSendFailed'), () => api.request('/voice', { method: 'POST', body: form }));
  },
});
const stream = eventStream(api, retry, {
  onOpen() {
    setConnection('');
    // What changed before the stream began is not in it: the messages posted meanwhile, and the
    // session's own state (closed while the page was loading or reconnecting).
    void catchUp();
    void checkSession();
  },
  onEvent: handleEvent,
  onLost: () => setConnection(t('chat.reconnecting'), 1500),
  stillValid: checkSession,
});

// ---- failures ---------------------------------------------------------------------------------

const REASONS = { 402: 'chat.err402', 409: 'chat.err409', 413: 'chat.err413', 422: 'chat.err422', 429: 'chat.err429', 502: 'chat.err502' };

/** The server's own explanation, in English: shown only on an English page (elsewhere the reason above says it). */
function serverDetail(result) {
  const detail = result.data && result.data.detail;
  if (words.lang !== 'en' || !detail) return '';
  if (typeof detail === 'string') return detail;
  if (!Array.isArray(detail)) return '';
  return detail.map((item) => (item && item.msg) || '').filter(Boolean).join('; ');
}

function failureText(action, result) {
  const reason = t(REASONS[result.status] || (result.status >= 500 ? 'chat.err5xx' : 'chat.errOther'), { status: result.status });
  const detail = serverDetail(result);
  return `${action}: ${reason}${detail ? ` (${detail})` : ''}`;
}

/** Sends something the customer made; shows the answer or why it failed. Resolves to true when sent. */
async function submit(action, send) {
  let result;
  try {
    result = await send();
  } catch {
    showNotice(`${action}: ${t('chat.offline')}`);
    return false;
  }
  if (result.ok) {
    alert.hide();
    messages.add([result.data], true);
    return true;
  }
  if (result.status === 401) {
    goInvalid('replaced');
    return false;
  }
  if (result.status === 404 || result.status === 409) void checkSession();
  showNotice(failureText(action, result));
  return false;
}

function setConnection(text, delayMs = 0) {
  clearTimeout(state.connectionTimer);
  if (!text) {
    els.connection.textContent = '';
    els.connection.hidden = true;
    return;
  }
  state.connectionTimer = setTimeout(() => {
    els.connection.textContent = text;
    els.connection.hidden = false;
  }, delayMs);
}

// ---- the session ------------------------------------------------------------------------------

function applySession(session) {
  if (!session || typeof session !== 'object') return;
  const previous = state.session || {};
  const next = { ...previous };
  for (const field of ['id', 'company', 'status', 'agent_name', 'agent_language', 'customer_name', 'customer_language', 'closed_at']) {
    if (session[field] !== undefined) next[field] = session[field];
  }
  state.session = next;
  if (next.customer_language && next.customer_language !== previous.customer_language) {
    words = translateDocument(document, next.customer_language);
    updateComposer();
  }
  const agent = agentName();
  els.agentName.textContent = agent;
  els.company.textContent = next.company || '';
  els.company.hidden = !next.company;
  els.avatar.textContent = agent.trim().charAt(0).toUpperCase() || '?';
  document.title = t('chat.title', { name: agent }) + (next.company ? ` – ${next.company}` : '');
  if (next.status === 'closed') setClosed(next.closed_at);
}

/** Asks the server whether the link still works; true when the chat can go on streaming. */
async function checkSession() {
  if (state.invalid) return false;
  let result;
  try {
    result = await api.request('');
  } catch {
    return true;
  }
  if (result.status === 401) return goInvalid('replaced'), false;
  if (result.status === 404) return goInvalid('notfound'), false;
  if (!result.ok) return true;
  applySession(result.data);
  return !state.closed;
}

function setClosed(closedAt) {
  if (state.invalid) return;
  const first = !state.closed;
  state.closed = true;
  if (state.session) state.session.status = 'closed';
  const when = closedAt ? new Date(closedAt) : null;
  els.closedWhen.textContent = when && !Number.isNaN(when.getTime()) ? `(${when.toLocaleString(words.lang, { dateStyle: 'medium', timeStyle: 'short' })})` : '';
  els.closedBanner.hidden = false;
  hideTyping();
  recorder.stop(true);
  updateComposer();
  stream.stop();
  setConnection('');
  if (first && messages.nearBottom()) messages.scrollToBottom();
}

const INVALID = { replaced: ['chat.invalid', 'chat.invalidText'], missing: ['chat.missingTitle', 'chat.missingText'], notfound: ['chat.notFoundTitle', 'chat.notFoundText'] };

function goInvalid(kind) {
  if (state.invalid) return;
  state.invalid = true;
  stream.stop();
  recorder.stop(true);
  hideTyping();
  alert.hide();
  setConnection('');
  const [title, text] = INVALID[kind];
  els.invalidTitle.dataset.i18n = title;
  els.invalidText.dataset.i18n = text;
  els.invalidTitle.textContent = t(title);
  els.invalidText.textContent = t(text);
  // The conversation is no longer this link's to show.
  messages.clear();
  els.messages.hidden = true;
  els.composer.hidden = true;
  els.closedBanner.hidden = true;
  els.loading.hidden = true;
  els.invalid.hidden = false;
  els.app.removeAttribute('aria-busy');
  document.title = els.invalidTitle.textContent;
}

// ---- messages and events ----------------------------------------------------------------------

async function loadHistory() {
  const action = t('chat.loadFailed');
  try {
    const result = await api.request(`/messages?after=0&limit=${HISTORY_LIMIT}`);
    if (result.ok) return messages.add(result.data && result.data.messages, true);
    if (result.status === 401) return goInvalid('replaced');
    showNotice(failureText(action, result));
  } catch {
    showNotice(`${action}: ${t('chat.offline')}`);
  }
}

/** Fetches what may have been posted while the stream was not connected. */
async function catchUp() {
  const after = messages.maxId();
  try {
    const result = await api.request(`/messages?after=${after}&limit=${CATCH_UP_LIMIT}`);
    if (!result.ok || !result.data || !Array.isArray(result.data.messages)) return;
    messages.add(result.data.messages, false);
    if (result.data.messages.length === CATCH_UP_LIMIT && messages.maxId() > after) await catchUp();
  } catch {
    // the stream's reconnection tries again
  }
}

function handleEvent(type, data) {
  if (state.invalid) return;
  switch (type) {
    case 'message.created':
      if (data && data.sender === 'agent') hideTyping();
      return messages.add([data], data && data.sender === 'customer');
    case 'session.typing':
      return data && data.sender === 'agent' && showTyping(data.author_name);
    case 'session.updated':
      return applySession(data);
    case 'session.closed':
      applySession(data);
      return setClosed(data && data.closed_at);
    case 'session.deleted':
      return void checkSession();
  }
}

function showTyping(name) {
  if (state.closed || state.invalid) return;
  els.typingText.textContent = t('chat.typing', { name: name || agentName() });
  els.typing.hidden = false;
  clearTimeout(state.typingTimer);
  state.typingTimer = setTimeout(hideTyping, TYPING_SHOW_MS);
}

function hideTyping() {
  clearTimeout(state.typingTimer);
  els.typing.hidden = true;
}

async function announceTyping() {
  if (state.closed || state.invalid || !els.input.value.trim()) return;
  const now = Date.now();
  if (now - state.lastTypingSentAt < TYPING_SEND_EVERY_MS) return;
  state.lastTypingSentAt = now;
  try {
    const result = await api.request('/typing', { method: 'POST' });
    // Typing is a courtesy: only a lost link or a closed chat matter here.
    if (result.status === 401 || result.status === 404 || result.status === 409) await checkSession();
  } catch {
    // offline: the stream's reconnection reports it
  }
}

// ---- the composer -----------------------------------------------------------------------------

function updateComposer() {
  const closed = state.closed || state.invalid;
  const recording = recorder.recording();
  const uploading = recorder.uploading();
  els.input.disabled = closed;
  els.input.hidden = recording || uploading;
  els.send.disabled = closed || state.sending || recording || uploading;
  els.record.disabled = closed || uploading || !canRecord();
  els.record.classList.toggle('recording', recording);
  els.record.setAttribute('aria-pressed', String(recording));
  const label = t(recording ? 'chat.stopRecording' : canRecord() ? 'chat.record' : cannotRecordReason());
  els.record.setAttribute('aria-label', label);
  els.record.title = label;
  els.send.title = t('chat.send');
  els.recording.hidden = !recording && !uploading;
  els.cancelRecording.hidden = !recording;
  els.input.placeholder = t(closed ? 'chat.closed' : 'chat.placeholder');
  els.composer.classList.toggle('disabled', closed);
}

function autoResize() {
  els.input.style.height = 'auto';
  els.input.style.height = `${Math.min(els.input.scrollHeight, 160)}px`;
}

async function send() {
  const text = els.input.value.trim();
  if (!text || state.sending || state.closed || state.invalid) return;
  state.sending = true;
  els.input.value = '';
  autoResize();
  updateComposer();
  const json = { text };
  const hint = languageHint();
  if (hint) json.language_hint = hint;
  const sent = await submit(t('chat.sendFailed'), () => api.request('/messages', { method: 'POST', json }));
  if (!sent && !els.input.value) {
    els.input.value = text;
    autoResize();
  }
  state.sending = false;
  updateComposer();
}

els.composer.addEventListener('submit', (event) => {
  event.preventDefault();
  void send();
});
els.input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey && !event.isComposing && event.keyCode !== 229) {
    event.preventDefault();
    void send();
  }
});
els.input.addEventListener('input', () => {
  autoResize();
  void announceTyping();
});
els.record.addEventListener('click', () => void recorder.toggle());
els.cancelRecording.addEventListener('click', () => {
  recorder.stop(true);
  els.input.focus();
});
els.noticeClose.addEventListener('click', alert.hide);
window.addEventListener('hashchange', () => {
  const next = keyFromFragment();
  if (next && next !== key) location.reload();
});

async function start() {
  updateComposer();
  if (!sessionId || !key) return goInvalid('missing');
  let result;
  for (;;) {
    try {
      result = await api.request('');
      if (result.ok || result.status === 401 || result.status === 404) break;
    } catch {
      // unreachable: tried again below
    }
    els.loading.textContent = t('chat.openFailed');
    await retry.wait(retry.next());
  }
  retry.reset();
  if (result.status === 401) return goInvalid('replaced');
  if (result.status === 404) return goInvalid('notfound');
  applySession(result.data);
  els.loading.hidden = true;
  els.messages.hidden = false;
  els.composer.hidden = false;
  els.app.removeAttribute('aria-busy');
  updateComposer();
  await loadHistory();
  if (state.invalid) return;
  messages.scrollToBottom();
  if (state.closed) return;
  els.input.focus({ preventScroll: true });
  void stream.run();
}

void start();
