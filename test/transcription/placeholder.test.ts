import { describe, expect, it } from 'vitest';
import { testModeTranscription } from '../../src/transcription/placeholder.js';

const audio = { data: Buffer.from('anything'), mimeType: 'audio/webm', filename: 'voice.webm' };

describe('test-mode transcription', () => {
  it('is named test/placeholder', () => {
    expect(testModeTranscription).toMatchObject({ name: 'test', model: 'placeholder' });
  });

  it('answers the fixed placeholder with the hint as the language', async () => {
    expect(await testModeTranscription.transcribe(audio, { language: 'fi' })).toEqual({ text: '[voice message]', language: 'fi' });
    expect(await testModeTranscription.transcribe(audio, { language: 'pt-BR' })).toEqual({ text: '[voice message]', language: 'pt' });
  });

  it('has no language without a hint', async () => {
    expect(await testModeTranscription.transcribe(audio, {})).toEqual({ text: '[voice message]', language: null });
    expect(await testModeTranscription.transcribe(audio, { language: null })).toEqual({ text: '[voice message]', language: null });
  });
});
