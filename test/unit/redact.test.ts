import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { fingerprint, redactUrl, secretScrubber } from '../../src/observability/redact.js';

describe('redaction at the source', () => {
  it('redactUrl replaces the values of secret query parameters and keeps the rest as sent', () => {
    expect(redactUrl('/media/stream/ch_x_a?token=abc-_123&source_id=agent')).toBe('/media/stream/ch_x_a?token=[redacted]&source_id=agent');
    expect(redactUrl('/media/listen/ch_x_c?unlock=u1')).toBe('/media/listen/ch_x_c?unlock=[redacted]');
    expect(redactUrl('/v1/account?API_KEY=spk_test_x&limit=5&Access_Token=a&refresh_token=b&client_secret=c&code=d&key=e&password=f')).toBe(
      '/v1/account?API_KEY=[redacted]&limit=5&Access_Token=[redacted]&refresh_token=[redacted]&client_secret=[redacted]&code=[redacted]&key=[redacted]&password=[redacted]',
    );
    // Encoded names are recognised; a bare name without a value and the fragment are left alone.
    expect(redactUrl('/x?%74oken=s3cret&token#frag')).toBe('/x?%74oken=[redacted]&token#frag');
    expect(redactUrl('/x?a=1&%E0%A4%A=2')).toBe('/x?a=1&%E0%A4%A=2');
    expect(redactUrl('/no/query')).toBe('/no/query');
  });

  it('fingerprint is short, stable and does not contain the secret', () => {
    const line = '0f0e0d0c-0b0a-4908-8706-050403020100';
    expect(fingerprint(line)).toBe(fingerprint(line));
    expect(fingerprint(line)).toMatch(/^[0-9a-f]{12}$/);
    expect(fingerprint(line)).not.toBe(fingerprint('0f0e0d0c-0b0a-4908-8706-050403020101'));
  });
});

describe('the last scrub of every log line', () => {
  const scrub = secretScrubber(['operator-chosen-Token-9f8e7d', 'sk-proj-openai-key-value', undefined, 'short']);

  it.each([
    ['an API key', 'key spk_live_AbCdEfGh0123456789abcdefGHIJKLMNOPqrstuvwx used', 'key spk_live_[redacted] used'],
    ['a test key', '"spk_test_AbCdEfGh0123456789"', '"spk_test_[redacted]"'],
    ['OAuth tokens', 'spk_at_AbCdEfGh01234567 and spk_rt_AbCdEfGh01234567', 'spk_at_[redacted] and spk_rt_[redacted]'],
    ['an OAuth code and client secret', 'spk_ac_AbCdEfGh01234567 spk_cs_AbCdEfGh01234567', 'spk_ac_[redacted] spk_cs_[redacted]'],
    ['a call key', 'X ck_Zy8Xw7Vu6Ts5Rq4Po3Nm2Lk1Ji0Hg9Fe', 'X ck_[redacted]'],
    ['a chat key', '(chk_Zy8Xw7Vu6Ts5Rq4Po3)', '(chk_[redacted])'],
    ['an admin token', 'adm_test_loCgBylK8cKnlstx9M8yFf4f', 'adm_[redacted]'],
    ['a media token in a URL', '"url":"/media/stream/ch_a?token=Zm9v-YmFy_&source_id=agent"', '"url":"/media/stream/ch_a?token=[redacted]&source_id=agent"'],
    ['an OAuth code in a URL', 'GET /cb?code=abc123&state=xyz', 'GET /cb?code=[redacted]&state=xyz'],
    ['a credential header in JSON', '{"x-chat-key":"anything at all","accept":"*/*"}', '{"x-chat-key":"[redacted]","accept":"*/*"}'],
    ['an escaped value in JSON', '{"Authorization":"Bearer a\\"b","n":1}', '{"Authorization":"[redacted]","n":1}'],
    ['a bearer value in a message', 'upstream said: Authorization: Bearer abc.def-ghi', 'upstream said: Authorization: Bearer [redacted]'],
    ['configured literals', 'token operator-chosen-Token-9f8e7d and sk-proj-openai-key-value', 'token [redacted] and [redacted]'],
  ])('removes %s', (_what, line, expected) => {
    expect(scrub(line)).toBe(expected);
  });

  it('leaves ordinary lines alone: ids, error codes, words that merely contain a prefix', () => {
    const line = '{"call_id":"call_8ZpQ2mW4xYt7LkVn","channel":"ch_8ZpQ2mW4xYt7LkVn_a","err":{"code":"ECONNRESET"},"msg":"stack_trace check_in short"}';
    expect(scrub(line)).toBe(line);
  });

  it('runs on every line the logger writes, child loggers included, and keeps them valid JSON', () => {
    const written: string[] = [];
    const logger = createLogger({ level: 'trace', secrets: ['my-admin-token-value'] }, { write: (line: string) => written.push(line) });
    logger.child({ component: 'test' }).trace({ url: '/x?unlock=u-1', key: 'chk_Zy8Xw7Vu6Ts5Rq4Po3' }, 'token my-admin-token-value');
    expect(written).toHaveLength(1);
    const entry = JSON.parse(written[0]!);
    expect(entry).toMatchObject({ component: 'test', url: '/x?unlock=[redacted]', key: '[redacted]', msg: 'token [redacted]' });
  });
});
