// The device check before joining, as Meet and Zoom have: the microphone's level, the camera's
// picture, and which microphone and camera to use. What is chosen here is what Join asks for.

const LEVEL_EVERY_MS = 100;

/**
 * `els`: the check button, the device fields, the two selects, the level meter and the preview video;
 * `page.t` the words, `page.video()` whether the call has video, `page.refused()` when the browser
 * refuses the devices. `start()` runs the check (a gesture:
 * the button), `stop()` releases the devices, `constraints()` is what getUserMedia should ask for.
 */
export function deviceCheck(els, page) {
  let stream = null;
  let audio = null; // { context, timer }

  const chosen = (select) => (select.value ? { deviceId: { exact: select.value } } : {});

  function constraints() {
    return {
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true, ...chosen(els.microphone) },
      video: page.video() ? { width: { ideal: 640 }, height: { ideal: 480 }, ...chosen(els.cameraSelect) } : false,
    };
  }

  /** The devices of a kind, named by the browser (the device's own name) or, before permission, numbered. */
  function fill(select, devices, word, current) {
    select.textContent = '';
    devices.forEach((device, index) => select.append(new Option(device.label || `${page.t(word)} ${index + 1}`, device.deviceId)));
    if (devices.some((device) => device.deviceId === current)) select.value = current;
  }

  async function start() {
    stop();
    try {
      stream = await navigator.mediaDevices.getUserMedia(constraints());
    } catch {
      page.refused();
      return false;
    }
    const devices = await navigator.mediaDevices.enumerateDevices();
    const microphoneInUse = stream.getAudioTracks()[0] && stream.getAudioTracks()[0].getSettings().deviceId;
    const cameraInUse = stream.getVideoTracks()[0] && stream.getVideoTracks()[0].getSettings().deviceId;
    fill(els.microphone, devices.filter((device) => device.kind === 'audioinput'), 'call.microphone', microphoneInUse);
    fill(els.cameraSelect, devices.filter((device) => device.kind === 'videoinput'), 'call.camera', cameraInUse);
    els.fields.hidden = false;
    els.cameraField.hidden = !page.video();
    els.preview.hidden = !page.video();
    els.preview.srcObject = page.video() ? new MediaStream(stream.getVideoTracks()) : null;
    const context = new AudioContext();
    const analyser = context.createAnalyser();
    analyser.fftSize = 1024;
    context.createMediaStreamSource(new MediaStream(stream.getAudioTracks())).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    const timer = setInterval(() => {
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const sample of samples) sum += sample * sample;
      // Speech sits around 0.05-0.2 RMS: scaled so a normal voice fills most of the meter.
      els.level.value = Math.min(1, Math.sqrt(sum / samples.length) * 4);
    }, LEVEL_EVERY_MS);
    audio = { context, timer };
    return true;
  }

  function stop() {
    if (audio) {
      clearInterval(audio.timer);
      void audio.context.close();
      audio = null;
    }
    if (stream) for (const track of stream.getTracks()) track.stop();
    stream = null;
    els.preview.srcObject = null;
    els.level.value = 0;
  }

  els.check.addEventListener('click', () => void start());
  // Another device chosen: check that one.
  for (const select of [els.microphone, els.cameraSelect]) select.addEventListener('change', () => void start());

  return { start, stop, constraints, running: () => stream !== null };
}
