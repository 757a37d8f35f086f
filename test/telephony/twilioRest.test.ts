import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TwilioRefused, TwilioRest, TwilioUnavailable, streamTwiml } from '../../src/telephony/twilio.js';
import { startTwilioStandIn, type TwilioStandIn } from '../support/standins/twilioStandIn.js';

const call = { to: '+358401234567', from: '+15005550006', twiml: '<Response/>', statusCallback: 'https://x/cb', ringTimeoutSeconds: 30 };
const noSleep = async () => {};

describe('Twilio REST client', () => {
  let twilio: TwilioStandIn;
  beforeAll(async () => {
    twilio = await startTwilioStandIn();
  });
  afterAll(() => twilio?.close());
  const account = () => ({ accountSid: twilio.accountSid, authToken: twilio.authToken });

  it('places and hangs up a call', async () => {
    twilio.reset();
    const rest = new TwilioRest({ baseUrl: twilio.url, sleep: noSleep });
    const sid = await rest.placeCall(account(), call);
    await rest.hangUp(account(), sid);
    expect(twilio.hungUp).toEqual([sid]);
  });

  it('a wrong auth token is refused (Twilio 401), not retried', async () => {
    twilio.reset();
    const rest = new TwilioRest({ baseUrl: twilio.url, sleep: noSleep });
    const error = await rest.placeCall({ ...account(), authToken: 'wrong' }, call).catch((err) => err);
    expect(error).toBeInstanceOf(TwilioRefused);
    expect(error).toMatchObject({ status: 401, code: 20003 });
    expect(twilio.requests).toHaveLength(1);
  });

  it('unreachable: retried, then unavailable, and the message carries no credential', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const slept: number[] = [];
    const rest = new TwilioRest({ baseUrl: `http://127.0.0.1:${port}`, sleep: async (ms) => void slept.push(ms) });
    const error = await rest.placeCall(account(), call).catch((err) => err);
    expect(error).toBeInstanceOf(TwilioUnavailable);
    expect(error.message).toBe('Twilio could not be reached (ECONNREFUSED) (3 attempts)');
    expect(slept).toEqual([200, 400]);
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain(twilio.authToken);
  });

  it('placing a call is not retried after a timeout (Twilio may have placed it); a hang-up is', async () => {
    twilio.reset();
    twilio.hang(5_000, 1);
    await expect(new TwilioRest({ baseUrl: twilio.url, sleep: noSleep, timeoutMs: 200 }).placeCall(account(), call)).rejects.toBeInstanceOf(TwilioUnavailable);
    expect(twilio.requests).toHaveLength(1);
    const sid = await new TwilioRest({ baseUrl: twilio.url, sleep: noSleep }).placeCall(account(), call);
    twilio.reset();
    twilio.created.set(sid, new URLSearchParams());
    // The retry must be answered within the timeout: long enough for a loaded machine, shorter than the hang.
    twilio.hang(5_000, 1);
    await new TwilioRest({ baseUrl: twilio.url, sleep: noSleep, timeoutMs: 2_000 }).hangUp(account(), sid);
    expect(twilio.hungUp).toEqual([sid]);
  });

  it('builds the TwiML of a two-way stream with the token as a Parameter (XML-escaped)', () => {
    expect(streamTwiml('wss://h/media/twilio/ch_x_c', 'a&b"c')).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://h/media/twilio/ch_x_c">' +
        '<Parameter name="token" value="a&amp;b&quot;c"/></Stream></Connect></Response>',
    );
  });
});
