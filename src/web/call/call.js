// A side of a call in the browser, opened from its link (`/call/{call_id}#k=<key>`). The key stays in
// the fragment and travels only as the `X-Call-Key` header of the public call endpoints; the media
// sockets use the stream token, listen unlock and signalling token of the join answer. Plain ES
// modules, no build step, nothing fetched from elsewhere; what the chat page needs too comes from
// /page-shared/ (the public API with the key header, reconnecting with backoff, notices).
import { languageName as nameOfLanguage, translateDocument } from '/page-i18n/catalogue.js';
import { idFromPath, keyFromFragment, publicApi } from '/page-shared/api.js';
import { backoff } from '/page-shared/backoff.js';
import { notice } from '/page-shared/notice.js';
import { deviceCheck } from './devices.js';
import { ChunkPlayer } from './player.js';

const LANGUAGES = ['en', 'es', 'fr', 'de', 'it', 'pt', 'nl', 'pl', 'sv', 'da', 'nb', 'fi', 'cs', 'el', 'ro', 'hu', 'uk', 'ru', 'tr', 'ar', 'he', 'fa', 'hi', 'bn', 'ur', 'id', 'vi', 'th', 'zh', 'ja', 'ko'];
const WAITING_POLL_MS = 3000; // while the other side has not chosen a language
const SPEAKING_LEVEL = 0.02; // RMS of a 20 ms frame above which a side counts as speaking
const SPEAKING_HOLD_MS = 600;

const $ = (id) => document.getElementById(id);
const els = {
  app: $('app'), status: $('status'), notice: $('notice'), otherName: $('other-name'), company: $('company'), peer: $('peer-state'),
  setup: $('setup'), language: $('language'), name: $('name'), join: $('join'), save: $('save'),
  stage: $('stage'), videos: $('videos'), remoteVideo: $('remote-video'), localVideo: $('local-video'),
  captions: $('captions'), captionsLog: $('captions-log'), latency: $('latency'), meSpeaking: $('me-speaking'),
  controls: $('controls'), mute: $('mute'), camera: $('camera'), settings: $('settings'), hangUp: $('hang-up'),
  devices: $('devices'),
};

const callId = idFromPath('call');
const key = keyFromFragment();
const { request: api } = publicApi(`/calls/public/${encodeURIComponent(callId)}`, 'X-Call-Key', key);
const retry = backoff({ firstMs: 500, maxMs: 15000, jitter: 0.2 });
const alert = notice(els.notice);

const state = {
  join: null, // the last JoinOut
  phase: 'loading', // loading | setup | waiting | live | ended | left | replaced | invalid | micDenied | elsewhere | offline
  words: translateDocument(document, navigator.language),
  media: null, // { context, stream, worklet, player, videoTrack }
  sockets: { stream: null, listen: null, signal: null },
  muted: false,
  cameraOff: false,
  speaking: false,
  speakingUntil: 0,
  peerPresent: false,
  pc: null,
  pendingCandidates: [],
  signalling: Promise.resolve(), // the signalling frames being applied, in order
  retrying: 0, // counts scheduled retries: one cancelled (stopEverything, a new connect) is not run
  pollTimer: null,
  captions: new Map(), // caption id -> <li>
  everJoined: false,
};
const t = (k, values) => state.words.t(k, values);
const devices = deviceCheck(
  { check: $('check-devices'), fields: $('device-fields'), microphone: $('microphone'), cameraSelect: $('camera-select'), cameraField: $('camera-field'), level: $('mic-level'), preview: $('preview') },
  { t, video: () => Boolean(state.join && state.join.video), refused: () => setPhase('micDenied', t('call.micDenied')) },
);

const wsUrl = (path, query) => `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}?${new URLSearchParams(query)}`;

// ---- what the page shows ----------------------------------------------------------------------

const otherName = () => (state.join && state.join.other_name) || t(state.join && state.join.role === 'agent' ? 'call.customer' : 'call.agent');

function setPhase(phase, text) {
  state.phase = phase;
  els.app.dataset.state = phase;
  els.app.removeAttribute('aria-busy');
  els.status.textContent = text || '';
  els.status.hidden = !text;
  const inCall = phase === 'live' || phase === 'waiting' || phase === 'offline';
  els.controls.hidden = !inCall;
  els.stage.hidden = !(inCall || phase === 'ended' || phase === 'left') || !state.everJoined;
  const canJoin = phase === 'setup' || phase === 'left' || phase === 'micDenied';
  els.setup.hidden = !canJoin;
  els.join.hidden = !canJoin;
  els.devices.hidden = !canJoin;
  if (!canJoin) devices.stop();
  els.save.hidden = true;
  els.settings.setAttribute('aria-expanded', 'false');
}

function applyJoin(join) {
  state.join = join;
  state.words = translateDocument(document, join.my_language || navigator.language);
  els.otherName.textContent = otherName();
  els.company.textContent = join.company ? t('call.with', { company: join.company }) : '';
  document.title = t('call.title', { name: otherName() });
  fillLanguages(join.my_language);
  if (join.my_name && !els.name.value) els.name.value = join.my_name;
  // A side whose language is known only needs the Join button; My Settings shows the fields later.
  for (const field of els.setup.querySelectorAll('.identity')) field.hidden = Boolean(join.my_language);
  els.remoteVideo.setAttribute('aria-label', t('call.otherVideo', { name: otherName() }));
  els.localVideo.setAttribute('aria-label', t('call.myVideo'));
  els.mute.textContent = t(state.muted ? 'call.unmute' : 'call.mute');
  els.camera.textContent = t(state.cameraOff ? 'call.cameraOn' : 'call.cameraOff');
}

function fillLanguages(selected) {
  const ui = new Intl.DisplayNames([state.words.lang], { type: 'language' });
  const current = selected || els.language.value || navigator.language.split('-')[0];
  const codes = LANGUAGES.includes(current) || !current ? LANGUAGES : [current, ...LANGUAGES];
  els.language.textContent = '';
  for (const code of codes) {
    const own = new Intl.DisplayNames([code], { type: 'language' }).of(code);
    const inUi = ui.of(code);
    const option = new Option(inUi && own && inUi !== own ? `${inUi} — ${own}` : own || inUi || code, code);
    option.lang = code;
    els.language.append(option);
  }
  els.language.value = codes.includes(current) ? current : 'en';
}

function showPeer(text) {
  els.peer.textContent = text;
}

/** Where the other side is: alone (not there yet), joined, left; '' once this side is out of the call. */
function showPresence(presence) {
  els.app.dataset.peer = presence;
  const words = { alone: 'call.alone', joined: 'call.otherJoined', left: 'call.otherLeft' };
  showPeer(presence ? t(words[presence], { name: otherName() }) : '');
}

/** A standing problem of what this side hears (interpretation paused or unavailable); '' clears it. */
const showNotice = (text) => alert.show(text);

const languageName = (code) => nameOfLanguage(code, state.words.lang);

// ---- start: the link, the join answer ---------------------------------------------------------

async function load() {
  if (!callId || !key) return setPhase('invalid', t('call.invalid'));
  let result;
  try {
    result = await api('');
  } catch {
    return scheduleRetry(load);
  }
  if (result.status === 401 || result.status === 404) return setPhase('invalid', t('call.invalid'));
  if (!result.ok) return scheduleRetry(load);
  applyJoin(result.data);
  if (result.data.status === 'ended') return setPhase('ended', t('call.ended'));
  setPhase('setup', t(result.data.my_language ? 'call.pressJoin' : 'call.pick'));
}

/** Join: the language (when chosen here), the microphone (and camera), then the sockets. */
async function joinCall(event) {
  event.preventDefault();
  if (!els.save.hidden) return void saveFromSettings(); // Enter in My Settings saves
  els.join.disabled = true;
  try {
    if (!state.join.my_language || els.name.value.trim() !== (state.join.my_name || '')) {
      if (!(await saveSettings())) return;
    }
    if (!(await startMedia())) return;
    state.everJoined = true;
    await connect();
    // The Join button is gone: focus goes to the first control of the call, not to the page's start.
    if (!els.controls.hidden) els.mute.focus();
  } finally {
    els.join.disabled = false;
  }
}

async function saveSettings() {
  const body = { language: els.language.value };
  const name = els.name.value.trim();
  if (name) body.name = name;
  let result;
  try {
    result = await api('/me', { method: 'POST', json: body });
  } catch {
    showPeer(t('call.offline', { seconds: 0 }));
    return false;
  }
  if (handleRefusal(result)) return false;
  if (!result.ok) return false;
  applyJoin(result.data);
  return true;
}

/** Handles 401 (replaced link) and 409 (ended); true when the page changed state. */
function handleRefusal(result) {
  if (result.status === 401) {
    stopEverything();
    setPhase('replaced', t(state.everJoined ? 'call.replaced' : 'call.invalid'));
    return true;
  }
  if (result.status === 409 || (result.data && result.data.status === 'ended')) {
    endedState();
    return true;
  }
  return false;
}

// ---- microphone, camera, playback -------------------------------------------------------------

async function startMedia() {
  if (state.media) return true;
  const context = new AudioContext({ latencyHint: 'interactive' });
  await context.resume();
  // The devices chosen in the check; the check's own hold on them is released first.
  const constraints = devices.constraints();
  devices.stop();
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia(constraints);
  } catch (err) {
    await context.close();
    setPhase('micDenied', t('call.micDenied'));
    return false;
  }
  await context.audioWorklet.addModule('/call-assets/microphone-worklet.js');
  const worklet = new AudioWorkletNode(context, 'microphone-to-24k', { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
  const silent = context.createGain();
  silent.gain.value = 0;
  context.createMediaStreamSource(new MediaStream(stream.getAudioTracks())).connect(worklet).connect(silent).connect(context.destination);
  worklet.port.onmessage = ({ data }) => onMicrophoneFrame(data);
  const videoTrack = stream.getVideoTracks()[0] || null;
  if (videoTrack) {
    els.localVideo.srcObject = new MediaStream([videoTrack]);
    els.videos.hidden = false;
    els.camera.hidden = false;
  }
  state.media = { context, stream, worklet, player: new ChunkPlayer(context), videoTrack, framesSent: 0 };
  window.__callPage = state.media; // read by tests and for diagnostics: frames sent, chunks played
  return true;
}

function onMicrophoneFrame({ pcm, level }) {
  const now = performance.now();
  if (!state.muted && level > SPEAKING_LEVEL) state.speakingUntil = now + SPEAKING_HOLD_MS;
  const speaking = !state.muted && now < state.speakingUntil;
  if (speaking !== state.speaking) {
    state.speaking = speaking;
    els.meSpeaking.classList.toggle('on', speaking);
    sendState();
  }
  const ws = state.sockets.stream;
  if (state.muted || !ws || ws.readyState !== WebSocket.OPEN) return;
  ws.send(pcm);
  state.media.framesSent++;
}

function stopMedia() {
  const media = state.media;
  state.media = null;
  if (!media) return;
  for (const track of media.stream.getTracks()) track.stop();
  media.worklet.port.onmessage = null;
  void media.context.close();
  els.localVideo.srcObject = null;
}

// ---- the sockets ------------------------------------------------------------------------------

async function connect() {
  state.retrying++;
  clearTimeout(state.pollTimer);
  let result;
  try {
    result = await api('');
  } catch {
    return scheduleRetry(connect);
  }
  if (handleRefusal(result)) return;
  if (!result.ok) return scheduleRetry(connect);
  applyJoin(result.data);
  const join = result.data;
  if (!join.ready) {
    setPhase('waiting', t('call.waiting', { name: otherName() }));
    state.pollTimer = setTimeout(connect, WAITING_POLL_MS);
    return;
  }
  closeSockets();
  setPhase('live', '');
  if (!state.peerPresent) showPresence('alone');
  openStream(join);
  openListen(join);
  openSignal(join);
}

function openStream(join) {
  const ws = new WebSocket(wsUrl(join.stream.path, { token: join.stream.token, source_id: join.stream.source_id }));
  ws.binaryType = 'arraybuffer';
  state.sockets.stream = ws;
  ws.onopen = () => retry.reset();
  ws.onclose = (event) => socketClosed('stream', ws, event);
}

function openListen(join) {
  const ws = new WebSocket(wsUrl(join.listen.path, { unlock: join.listen.unlock }));
  ws.binaryType = 'arraybuffer';
  state.sockets.listen = ws;
  ws.onmessage = ({ data }) => {
    if (typeof data === 'string') return listenFrame(JSON.parse(data));
    if (state.media) state.media.player.play(data);
  };
  ws.onclose = (event) => socketClosed('listen', ws, event);
}

function openSignal(join) {
  const ws = new WebSocket(wsUrl(join.signal.path, { token: join.signal.token }));
  state.sockets.signal = ws;
  ws.onopen = () => sendState();
  // One frame at a time: an answer or candidates must not overtake the offer still being applied.
  ws.onmessage = ({ data }) => {
    state.signalling = state.signalling.then(() => signalFrame(JSON.parse(data))).catch((err) => console.warn('signalling:', err));
  };
  ws.onclose = (event) => socketClosed('signal', ws, event);
}

function closeSockets() {
  for (const name of ['stream', 'listen', 'signal']) {
    const ws = state.sockets[name];
    state.sockets[name] = null;
    if (ws) {
      ws.onclose = null;
      ws.onmessage = null;
      ws.close(1000);
    }
  }
  closePeer();
}

/** A socket closed: the close code says why (protocol.ts CLOSE CODES). */
function socketClosed(name, ws, event) {
  if (state.sockets[name] !== ws) return;
  state.sockets[name] = null;
  switch (event.code) {
    case 4000:
      return endedState();
    case 4001:
      stopEverything();
      return setPhase('replaced', t('call.replaced'));
    case 4004:
      return leftState();
    case 4003:
      stopEverything();
      return setPhase('elsewhere', t('call.elsewhere'));
    case 4002:
      // The other side speaks another language now: hear it afresh (the join answer says which).
      if (state.media) state.media.player.reset();
      return void reconnectListen();
    default:
      return lostConnection();
  }
}

async function reconnectListen() {
  let result;
  try {
    result = await api('');
  } catch {
    return lostConnection();
  }
  if (handleRefusal(result) || !result.ok) return;
  applyJoin(result.data);
  showPeer(t('call.otherLanguage', { name: otherName(), language: languageName(result.data.other_language) }));
  if (result.data.ready) openListen(result.data);
}

function lostConnection() {
  if (state.phase !== 'live' && state.phase !== 'offline') return;
  closeSockets();
  scheduleRetry(connect);
}

/** Runs `what` again after the backoff's delay (sooner when the browser comes back online), counting down. */
async function scheduleRetry(what) {
  const mine = ++state.retrying;
  const delay = retry.next();
  const at = Date.now() + delay;
  if (state.phase !== 'loading') setPhase('offline', t('call.offline', { seconds: Math.ceil(delay / 1000) }));
  const countdown = setInterval(() => {
    const seconds = Math.max(0, Math.ceil((at - Date.now()) / 1000));
    if (state.phase === 'offline') els.status.textContent = t('call.offline', { seconds });
  }, 1000);
  await retry.wait(delay);
  clearInterval(countdown);
  if (mine === state.retrying) void what();
}

// ---- what the listen socket says ------------------------------------------------------------

function listenFrame(frame) {
  if (frame.type === 'caption') {
    showCaption(frame, 'other');
  } else if (frame.type === 'provenance') {
    // Interpreted again (a top-up, a reconnected engine), or test mode's echo: nothing stands in the way.
    if (frame.engine !== 'none') {
      showNotice('');
    }
  } else if (frame.type === 'notice') {
    if (frame.code === 'balance_exhausted') {
      showNotice(t('call.paused', { name: otherName() }));
    } else if (frame.code === 'translation_unavailable') {
      showNotice(t('call.untranslated', { name: otherName() }));
    }
  }
}

function showCaption(frame, who) {
  const id = `${who}:${frame.id}`;
  let item = state.captions.get(id);
  if (!item) {
    item = document.createElement('li');
    item.className = `caption ${who}`;
    item.dataset.testid = 'caption';
    const speaker = document.createElement('strong');
    const text = document.createElement('span');
    const original = document.createElement('small');
    item.append(speaker, text, original);
    state.captions.set(id, item);
    els.captions.append(item);
  }
  const [speaker, text, original] = item.children;
  speaker.textContent = `${who === 'me' ? t('call.you') : otherName()}: `;
  // Mine: what I said, then how the other side heard it; theirs: in my language, the original below.
  text.textContent = who === 'me' ? frame.original : frame.translated;
  text.lang = who === 'me' ? frame.source_language : frame.language;
  original.textContent = who === 'me' ? frame.translated : frame.original;
  original.lang = who === 'me' ? frame.language : frame.source_language;
  item.classList.toggle('partial', !frame.final);
  els.captionsLog.scrollTop = els.captionsLog.scrollHeight;
}

// ---- signalling and video ---------------------------------------------------------------------

function sendSignal(frame) {
  const ws = state.sockets.signal;
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
}

function sendState() {
  sendSignal({ type: 'state', muted: state.muted, camera: !state.cameraOff && Boolean(state.media && state.media.videoTrack), speaking: state.speaking });
}

/** What the server says; the other page's words come only inside `peer_signal`. */
async function signalFrame(frame) {
  switch (frame.type) {
    case 'peer':
      if (frame.present !== state.peerPresent) showPresence(frame.present ? 'joined' : 'left');
      state.peerPresent = frame.present;
      if (!frame.present) return closePeer();
      // The agent's page offers; the customer's answers. A new offer replaces any earlier connection.
      if (state.join.video && state.join.role === 'agent') return offer();
      return;
    case 'peer_signal':
      return peerSignal(frame.signal);
    case 'caption':
      return showCaption(frame, 'me'); // how the other side got my words
    case 'ice_servers':
      // Fresh TURN credentials before the join answer's expire: for the next connection, and for an ICE restart of this one.
      state.join.ice_servers = frame.ice_servers;
      if (state.pc) state.pc.setConfiguration({ iceServers: frame.ice_servers });
      return;
  }
}

/** What the other side's page said (the server let through only these kinds): negotiation and its state. */
async function peerSignal(signal) {
  switch (signal.type) {
    case 'state':
      els.app.dataset.otherSpeaking = String(Boolean(signal.speaking));
      if (signal.speaking) showPeer(t('call.otherSpeaking', { name: otherName() }));
      else if (signal.muted) showPeer(t('call.otherMuted', { name: otherName() }));
      else if (state.peerPresent) showPresence('joined');
      return;
    case 'offer':
      if (!state.join.video) return;
      newPeer();
      await state.pc.setRemoteDescription({ type: 'offer', sdp: signal.sdp });
      await flushCandidates();
      await state.pc.setLocalDescription(await state.pc.createAnswer());
      return sendSignal({ type: 'answer', sdp: state.pc.localDescription.sdp });
    case 'answer':
      if (state.pc && state.pc.signalingState === 'have-local-offer') {
        await state.pc.setRemoteDescription({ type: 'answer', sdp: signal.sdp });
        await flushCandidates();
      }
      return;
    case 'candidate':
      if (!signal.candidate) return;
      if (state.pc && state.pc.remoteDescription) return state.pc.addIceCandidate(signal.candidate).catch(() => {});
      state.pendingCandidates.push(signal.candidate);
  }
}

async function flushCandidates() {
  const pending = state.pendingCandidates.splice(0);
  for (const candidate of pending) await state.pc.addIceCandidate(candidate).catch(() => {});
}

function newPeer() {
  closePeer();
  const pc = new RTCPeerConnection({ iceServers: state.join.ice_servers });
  state.pc = pc;
  state.pendingCandidates = [];
  const track = state.media && state.media.videoTrack;
  // Video only: each side hears the other through the interpretation path, never straight.
  if (track) pc.addTrack(track, new MediaStream([track]));
  else pc.addTransceiver('video', { direction: 'recvonly' });
  pc.onicecandidate = ({ candidate }) => sendSignal({ type: 'candidate', candidate: candidate ? candidate.toJSON() : null });
  pc.ontrack = ({ track: remote, streams }) => {
    if (remote.kind !== 'video') return void (remote.enabled = false);
    els.remoteVideo.srcObject = streams[0] || new MediaStream([remote]);
    els.remoteVideo.muted = true;
    els.videos.hidden = false;
  };
  pc.onconnectionstatechange = () => {
    if (pc.connectionState === 'failed' && state.join.role === 'agent' && state.peerPresent) void offer();
  };
}

async function offer() {
  newPeer();
  await state.pc.setLocalDescription(await state.pc.createOffer());
  sendSignal({ type: 'offer', sdp: state.pc.localDescription.sdp });
}

function closePeer() {
  if (state.pc) state.pc.close();
  state.pc = null;
  state.pendingCandidates = [];
  els.remoteVideo.srcObject = null;
}

// ---- the buttons ------------------------------------------------------------------------------

function toggleMute() {
  state.muted = !state.muted;
  for (const track of state.media ? state.media.stream.getAudioTracks() : []) track.enabled = !state.muted;
  els.mute.setAttribute('aria-pressed', String(state.muted));
  els.mute.textContent = t(state.muted ? 'call.unmute' : 'call.mute');
  if (state.muted) state.speaking = false;
  sendState();
}

function toggleCamera() {
  const track = state.media && state.media.videoTrack;
  if (!track) return;
  state.cameraOff = !state.cameraOff;
  track.enabled = !state.cameraOff;
  els.camera.setAttribute('aria-pressed', String(state.cameraOff));
  els.camera.textContent = t(state.cameraOff ? 'call.cameraOn' : 'call.cameraOff');
  sendState();
}

function toggleSettings() {
  const open = els.setup.hidden;
  els.setup.hidden = !open;
  els.settings.setAttribute('aria-expanded', String(open));
  if (!open) return;
  for (const field of els.setup.querySelectorAll('.identity')) field.hidden = false;
  els.devices.hidden = true;
  els.join.hidden = true;
  els.save.hidden = false;
  els.language.focus();
}

async function saveFromSettings() {
  els.save.disabled = true;
  try {
    if (await saveSettings()) toggleSettings();
  } finally {
    els.save.disabled = false;
  }
}

async function hangUp() {
  els.hangUp.disabled = true;
  try {
    const result = await api('/end', { method: 'POST' });
    if (handleRefusal(result)) return;
    if (result.ok && result.data.status === 'ended') return endedState();
    leftState();
  } catch {
    lostConnection();
  } finally {
    els.hangUp.disabled = false;
  }
}

function stopEverything() {
  showNotice('');
  state.retrying++;
  clearTimeout(state.pollTimer);
  closeSockets();
  stopMedia();
  els.videos.hidden = true;
}

function endedState() {
  stopEverything();
  setPhase('ended', t('call.ended'));
  showPresence('');
}

function leftState() {
  stopEverything();
  state.peerPresent = false;
  setPhase('left', t('call.left'));
  showPresence('');
}

// The delay the page holds before playing what it hears.
setInterval(() => {
  els.latency.textContent = state.media && state.phase === 'live' ? t('call.latency', { ms: state.media.player.delayMs }) : '';
}, 500);

els.setup.addEventListener('submit', joinCall);
els.save.addEventListener('click', () => void saveFromSettings());
els.mute.addEventListener('click', toggleMute);
els.camera.addEventListener('click', toggleCamera);
els.settings.addEventListener('click', toggleSettings);
els.hangUp.addEventListener('click', () => void hangUp());
void load();
