import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { AudioError, inspectAudio, MAX_VOICE_SECONDS, type AudioInfo } from '../../src/audio/inspect.js';

const fixture = (name: string) => readFile(new URL(`../fixtures/audio/${name}`, import.meta.url));

async function audioError(promise: Promise<unknown>): Promise<AudioError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AudioError);
    return error as AudioError;
  }
  throw new Error('expected an AudioError');
}

// Durations as an independent decoder (ffmpeg 5.1, full decode) measures them; see make-fixtures.md.
const cases: { file: string; format: AudioInfo['format']; mimeType: string; codec: string; seconds: number }[] = [
  { file: 'speech-3s.wav', format: 'wav', mimeType: 'audio/wav', codec: 'pcm-s16', seconds: 3.0 },
  { file: 'speech-3s-cbr.mp3', format: 'mp3', mimeType: 'audio/mpeg', codec: 'mp3', seconds: 3.0 },
  { file: 'speech-3s-vbr.mp3', format: 'mp3', mimeType: 'audio/mpeg', codec: 'mp3', seconds: 3.0 },
  { file: 'speech-3s.opus', format: 'ogg', mimeType: 'audio/ogg', codec: 'opus', seconds: 3.0 },
  { file: 'speech-3s.ogg', format: 'ogg', mimeType: 'audio/ogg', codec: 'vorbis', seconds: 3.0 },
  { file: 'speech-3s.m4a', format: 'mp4', mimeType: 'audio/mp4', codec: 'aac', seconds: 3.0 },
  { file: 'speech-3s-aac-fragmented.mp4', format: 'mp4', mimeType: 'audio/mp4', codec: 'aac', seconds: 3.0 },
  // Real Chromium 156 MediaRecorder output: no duration in the headers.
  { file: 'chromium-opus.webm', format: 'webm', mimeType: 'audio/webm', codec: 'opus', seconds: 3.0 },
  { file: 'chromium-opus.mp4', format: 'mp4', mimeType: 'audio/mp4', codec: 'opus', seconds: 2.92 },
  // The chunks delivered before the recording was stopped (what is left when a tab dies mid-recording).
  { file: 'chromium-opus-abrupt.webm', format: 'webm', mimeType: 'audio/webm', codec: 'opus', seconds: 1.74 },
  { file: 'chromium-opus-abrupt.mp4', format: 'mp4', mimeType: 'audio/mp4', codec: 'opus', seconds: 1.78 },
];

describe('inspectAudio: format and measured duration of real files', () => {
  for (const { file, format, mimeType, codec, seconds } of cases) {
    it(`${file}: ${format}/${codec}, ${seconds} s`, async () => {
      const info = await inspectAudio(await fixture(file));
      expect(info.format).toBe(format);
      expect(info.mimeType).toBe(mimeType);
      expect(info.codec).toBe(codec);
      expect(Math.abs(info.durationSeconds - seconds)).toBeLessThanOrEqual(0.15);
    });
  }

  it('measures the 125-second recording (no duration header) as over the limit, quickly', async () => {
    const data = await fixture('long-125s.webm');
    await inspectAudio(data); // warm up the WASM decoder
    // CPU time, not wall time: what the decoder did, whatever else the machine was doing meanwhile.
    const started = process.cpuUsage();
    const info = await inspectAudio(data);
    const { user, system } = process.cpuUsage(started);
    const elapsed = (user + system) / 1000;
    expect(info).toMatchObject({ format: 'webm', codec: 'opus' });
    expect(info.durationSeconds).toBeGreaterThan(MAX_VOICE_SECONDS);
    expect(Math.abs(info.durationSeconds - 125)).toBeLessThanOrEqual(0.15);
    expect(elapsed).toBeLessThan(2000);
  });

  it('decides the format from the bytes, not from the declared type', async () => {
    const webm = await inspectAudio(await fixture('chromium-opus.webm'), 'audio/mpeg');
    expect(webm.format).toBe('webm');
    expect(webm.mimeType).toBe('audio/webm');
    const mp3 = await inspectAudio(await fixture('speech-3s-vbr.mp3'), 'audio/webm;codecs=opus');
    expect(mp3.format).toBe('mp3');
    const mp4 = await inspectAudio(await fixture('chromium-opus.mp4'), 'audio/webm');
    expect(mp4.format).toBe('mp4');
  });

  it('a text file declared as MP3 is unsupported', async () => {
    const error = await audioError(inspectAudio(await fixture('not-audio.mp3'), 'audio/mpeg'));
    expect(error.reason).toBe('unsupported');
  });
});

describe('inspectAudio: streams cut off at the end are measured up to the last complete packet', () => {
  it('Chromium WebM cut in the middle of a block', async () => {
    const data = await fixture('chromium-opus.webm');
    const info = await inspectAudio(data.subarray(0, data.length - 500));
    // The last (60 ms, ~960 byte) packet is lost, nothing else.
    expect(info.durationSeconds).toBeCloseTo(2.94, 3);
  });

  it('Chromium WebM cut anywhere keeps what it has', async () => {
    const data = await fixture('chromium-opus.webm');
    const half = await inspectAudio(data.subarray(0, Math.floor(data.length / 2)));
    expect(half.durationSeconds).toBeGreaterThan(1.2);
    expect(half.durationSeconds).toBeLessThan(1.8);
  });

  it('WebM with declared cluster sizes (not live) cut in the middle', async () => {
    const data = await fixture('long-125s.webm');
    const info = await inspectAudio(data.subarray(0, 40_000));
    expect(info.durationSeconds).toBeGreaterThan(50);
    expect(info.durationSeconds).toBeLessThan(75);
  });

  it('Chromium MP4 cut in the middle of a fragment header', async () => {
    const data = await fixture('chromium-opus.mp4');
    const moofs: number[] = [];
    for (let at = data.indexOf('moof'); at !== -1; at = data.indexOf('moof', at + 1)) moofs.push(at - 4);
    const info = await inspectAudio(data.subarray(0, moofs[3]! + 30));
    expect(info.durationSeconds).toBeGreaterThan(0.5);
    expect(info.durationSeconds).toBeLessThan(1.2);
  });

  it('Ogg cut in the middle of a page', async () => {
    const data = await fixture('speech-3s.ogg');
    const info = await inspectAudio(data.subarray(0, data.length - 100));
    expect(info.durationSeconds).toBeGreaterThan(2.5);
    expect(info.durationSeconds).toBeLessThan(3.0);
  });
});

describe('inspectAudio: errors', () => {
  it('no bytes -> empty', async () => {
    expect((await audioError(inspectAudio(Buffer.alloc(0)))).reason).toBe('empty');
  });

  it('a WAV with no samples -> empty', async () => {
    expect((await audioError(inspectAudio(await fixture('empty.wav')))).reason).toBe('empty');
  });

  it('a WebM recording stopped before its first block -> empty', async () => {
    const data = await fixture('chromium-opus.webm');
    const firstCluster = data.indexOf(Buffer.from([0x1f, 0x43, 0xb6, 0x75]));
    expect(firstCluster).toBeGreaterThan(0);
    expect((await audioError(inspectAudio(data.subarray(0, firstCluster)))).reason).toBe('empty');
  });

  it('an M4A cut before its moov -> broken', async () => {
    expect((await audioError(inspectAudio(await fixture('truncated.m4a')))).reason).toBe('broken');
  });

  it('headers cut off -> broken', async () => {
    const webm = await fixture('chromium-opus.webm');
    expect((await audioError(inspectAudio(webm.subarray(0, 100)))).reason).toBe('broken');
    const ogg = await fixture('speech-3s.ogg');
    expect((await audioError(inspectAudio(ogg.subarray(0, 2000)))).reason).toBe('broken');
    const wav = await fixture('speech-3s.wav');
    expect((await audioError(inspectAudio(wav.subarray(0, 30)))).reason).toBe('broken');
    expect((await audioError(inspectAudio(webm.subarray(0, 3)))).reason).toBe('unsupported');
  });

  it('garbage in the middle of a WebM -> broken (not a silently shorter duration)', async () => {
    const data = Buffer.from(await fixture('chromium-opus.webm'));
    for (let i = 5000; i < 7000; i++) data[i] = (i * 7919) % 251;
    expect((await audioError(inspectAudio(data))).reason).toBe('broken');
  });

  it('garbage in the middle of a fragmented MP4 -> broken', async () => {
    const data = Buffer.from(await fixture('chromium-opus.mp4'));
    for (let i = 20_000; i < 23_000; i++) data[i] = (i * 7919) % 251;
    expect((await audioError(inspectAudio(data))).reason).toBe('broken');
  });

  it('corrupt Opus packets -> broken', async () => {
    const data = Buffer.from(await fixture('speech-3s.opus'));
    // Overwrite the packet data of the first audio page; the page headers stay intact.
    const pages: number[] = [];
    for (let at = data.indexOf('OggS'); at !== -1; at = data.indexOf('OggS', at + 1)) pages.push(at);
    const third = pages[2]!;
    const bodyStart = third + 27 + data[third + 26]!;
    for (let i = bodyStart; i < pages[3]!; i++) data[i] = 0xff;
    // The page CRC no longer matches, but the demuxer hands the packets over all the same; 0xff bytes are no
    // valid Opus packet: libopus refuses them, and a file with undecodable audio is broken.
    expect((await audioError(inspectAudio(data))).reason).toBe('broken');
  });

  it('random bytes, FLAC, Matroska (not WebM) and ADPCM WAV -> unsupported', async () => {
    const random = Buffer.alloc(4096);
    for (let i = 0; i < random.length; i++) random[i] = (i * 2654435761) % 256;
    expect((await audioError(inspectAudio(random))).reason).toBe('unsupported');
    const flac = Buffer.concat([Buffer.from('fLaC'), Buffer.alloc(200)]);
    expect((await audioError(inspectAudio(flac))).reason).toBe('unsupported');
    expect((await audioError(inspectAudio(await fixture('speech-3s.mkv'), 'audio/webm'))).reason).toBe('unsupported');
    const adpcm = Buffer.from(await fixture('speech-3s.wav'));
    adpcm.writeUInt16LE(2, 20); // WAVE format tag 2: Microsoft ADPCM
    expect((await audioError(inspectAudio(adpcm))).reason).toBe('unsupported');
  });

  it('an EBML file whose DocType is neither webm nor matroska -> broken', async () => {
    const data = Buffer.from(await fixture('chromium-opus.webm'));
    data.write('mkvx', data.indexOf('webm'), 'latin1');
    expect((await audioError(inspectAudio(data))).reason).toBe('broken');
  });
});
