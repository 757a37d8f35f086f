// Voice messages: the microphone recorded with MediaRecorder, shown as a running time, sent as one
// multipart `audio` field when stopped (or discarded when cancelled).
import { formatDuration } from './messages.js';

const MAX_RECORDING_MS = 115 * 1000; // the server accepts up to two minutes; stop a little before
const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
const TYPES = ['audio/webm;codecs=opus', 'audio/mp4', 'audio/webm', 'audio/ogg;codecs=opus'];

export const canRecord = () => Boolean(window.isSecureContext && navigator.mediaDevices && navigator.mediaDevices.getUserMedia && window.MediaRecorder);

/** Why this browser cannot record (a catalogue key). */
export const cannotRecordReason = () => (window.isSecureContext ? 'chat.voiceUnsupported' : 'chat.needsHttps');

const pickMimeType = () => TYPES.find((type) => MediaRecorder.isTypeSupported && MediaRecorder.isTypeSupported(type)) || '';

function extensionFor(type) {
  if (/webm/i.test(type)) return 'webm';
  if (/mp4|m4a|aac/i.test(type)) return 'm4a';
  if (/ogg/i.test(type)) return 'ogg';
  return 'webm';
}

/**
 * `start()` / `stop(discard)`; `page` gives `t`, `showNotice(text)`, `showProgress(text)` (the running
 * time, '' when done), `changed()` (recording or uploading started or ended), `upload(form)` (resolves
 * when the message is sent or its failure shown).
 */
export function voiceRecorder(page) {
  let current = null; // { recorder, stream, chunks, startedAt, timer, discard, mimeType, finished }
  let uploading = false;

  async function start() {
    if (current || uploading) return;
    if (!canRecord()) return page.showNotice(`${page.t(cannotRecordReason())}.`);
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
    } catch (err) {
      const name = err && err.name;
      page.showNotice(page.t(name === 'NotAllowedError' || name === 'SecurityError' ? 'chat.micBlocked' : name === 'NotFoundError' ? 'chat.noMic' : 'chat.micFailed'));
      return page.changed();
    }
    if (!page.mayRecord()) return stream.getTracks().forEach((track) => track.stop());
    const mimeType = pickMimeType();
    let recorder;
    try {
      recorder = new MediaRecorder(stream, mimeType ? { mimeType } : undefined);
    } catch {
      stream.getTracks().forEach((track) => track.stop());
      page.showNotice(`${page.t('chat.voiceUnsupported')}.`);
      return page.changed();
    }
    const rec = { recorder, stream, chunks: [], startedAt: Date.now(), timer: null, discard: false, mimeType, finished: false };
    recorder.ondataavailable = (event) => event.data && event.data.size && rec.chunks.push(event.data);
    recorder.onstop = () => finish(rec);
    recorder.onerror = () => {
      rec.discard = true;
      page.showNotice(page.t('chat.recordFailed'));
    };
    current = rec;
    recorder.start(1000);
    const tick = () => {
      const elapsed = Date.now() - rec.startedAt;
      page.showProgress(page.t('chat.recordingTime', { elapsed: formatDuration(elapsed / 1000), max: formatDuration(MAX_RECORDING_MS / 1000) }));
      if (elapsed >= MAX_RECORDING_MS) stop(false);
    };
    rec.timer = setInterval(tick, 250);
    tick();
    page.changed();
  }

  /** Stops the recorder; the recording is sent unless `discard`. */
  function stop(discard) {
    const rec = current;
    if (!rec) return;
    current = null;
    rec.discard = rec.discard || discard;
    clearInterval(rec.timer);
    if (!rec.discard) {
      uploading = true;
      page.showProgress(page.t('chat.sendingVoice'));
    }
    page.changed();
    try {
      if (rec.recorder.state !== 'inactive') rec.recorder.stop();
      else void finish(rec);
    } catch {
      void finish(rec);
    }
  }

  async function finish(rec) {
    if (rec.finished) return;
    rec.finished = true;
    rec.stream.getTracks().forEach((track) => track.stop());
    if (rec.discard) return done();
    const type = rec.recorder.mimeType || rec.mimeType || (rec.chunks[0] && rec.chunks[0].type) || 'audio/webm';
    const blob = new Blob(rec.chunks, { type });
    if (!blob.size || blob.size > MAX_UPLOAD_BYTES) {
      done();
      return page.showNotice(page.t(blob.size ? 'chat.tooLarge' : 'chat.nothingRecorded'));
    }
    const form = new FormData();
    form.append('audio', blob, `voice-message.${extensionFor(type)}`);
    try {
      await page.upload(form);
    } finally {
      done();
    }
  }

  function done() {
    uploading = false;
    page.showProgress('');
    page.changed();
  }

  return {
    start,
    stop,
    toggle: () => (current ? stop(false) : start()),
    recording: () => Boolean(current),
    uploading: () => uploading,
  };
}
