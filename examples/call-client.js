// One side of a call from another origin, in plain browser JavaScript: join (GET), set language and
// name (POST .../me), send the microphone to `stream.path` as 24 kHz mono PCM16, play `listen.path`'s
// WAV chunks back to back, show captions and notices, hang up (POST .../end).
const server = new URL(location.href).searchParams.get('server') || location.origin;
const fragment = new URLSearchParams(location.hash.slice(1));
const callId = fragment.get('call');
const key = fragment.get('k');
const $ = (id) => document.getElementById(id);

async function callApi(path, method = 'GET', body) {
  const response = await fetch(`${server}/calls/public/${callId}${path}`, {
    method,
    headers: { 'X-Call-Key': key, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!response.ok) throw new Error(`${method} ${path || '/'}: ${response.status} ${(await response.json()).detail}`);
  return response.json();
}

const say = (state) => {
  $('state').textContent = state;
  $('state').dataset.state = state;
};
const socketUrl = (path, query) => `${server.replace(/^http/, 'ws')}${path}?${new URLSearchParams(query)}`;

let sockets = [];
let context = null;

async function join() {
  const settings = await callApi('/me', 'POST', { language: $('language').value, ...($('name').value ? { name: $('name').value } : {}) });
  $('title').textContent = `Call with ${settings.company}`;
  if (!settings.ready) return say('waiting for the other side');
  context = new AudioContext();
  await context.resume();
  const microphone = await navigator.mediaDevices.getUserMedia({ audio: true });

  // Hear: each binary frame is a whole WAV file (44-byte header, 24 kHz mono PCM16); play them back to back.
  let playAt = 0;
  const listen = new WebSocket(socketUrl(settings.listen.path, { unlock: settings.listen.unlock }));
  listen.binaryType = 'arraybuffer';
  listen.onmessage = ({ data }) => {
    if (typeof data === 'string') {
      const frame = JSON.parse(data);
      if (frame.type === 'caption' && frame.final) $('captions').append(Object.assign(document.createElement('li'), { textContent: frame.translated }));
      if (frame.type === 'notice') say(frame.code);
      return;
    }
    const samples = new Int16Array(data.slice(44));
    const buffer = context.createBuffer(1, samples.length, 24000);
    buffer.getChannelData(0).set(Float32Array.from(samples, (s) => s / 32768));
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(context.destination);
    playAt = Math.max(playAt, context.currentTime + 0.08);
    source.start(playAt);
    playAt += buffer.duration;
    document.body.dataset.chunks = String(Number(document.body.dataset.chunks || 0) + 1);
  };

  // Speak: the microphone, resampled by an AudioContext running at 24 kHz, in 20 ms frames of PCM16.
  const stream = new WebSocket(socketUrl(settings.stream.path, { token: settings.stream.token, source_id: settings.stream.source_id }));
  const capture = new AudioContext({ sampleRate: 24000 });
  const processor = capture.createScriptProcessor(512, 1, 1); // an AudioWorklet is better; this keeps the example one file
  let pending = [];
  processor.onaudioprocess = ({ inputBuffer }) => {
    pending.push(...inputBuffer.getChannelData(0));
    while (pending.length >= 480) {
      const frame = Int16Array.from(pending.splice(0, 480), (s) => Math.max(-32768, Math.min(32767, Math.round(s * 32767))));
      if (stream.readyState === WebSocket.OPEN) stream.send(frame.buffer);
    }
  };
  capture.createMediaStreamSource(microphone).connect(processor).connect(capture.destination);
  sockets = [listen, stream];
  const closed = ({ code }) => say({ 4000: 'ended', 4001: 'link replaced', 4004: 'left' }[code] || `closed ${code}`);
  listen.onclose = closed;
  listen.onopen = () => say('in the call');
  $('hang-up').disabled = false;
  window.callExample = { capture, microphone };
}

async function hangUp() {
  const after = await callApi('/end', 'POST');
  for (const socket of sockets) socket.close();
  if (window.callExample) {
    window.callExample.microphone.getTracks().forEach((track) => track.stop());
    await window.callExample.capture.close();
  }
  say(after.status === 'ended' ? 'ended' : 'left');
  $('hang-up').disabled = true;
}

$('join').onclick = () => join().catch((err) => say(`error: ${err.message}`));
$('hang-up').onclick = () => hangUp().catch((err) => say(`error: ${err.message}`));
callApi('').then((joined) => {
  $('title').textContent = `Call with ${joined.company}`;
  if (joined.my_language) $('language').value = joined.my_language;
  say(joined.status === 'ended' ? 'ended' : 'ready to join');
}, (err) => say(`error: ${err.message}`));
