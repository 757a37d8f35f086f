import { describe, expect, it } from 'vitest';
import { iceServersFor, turnCredentials, turnRenewalMs } from '../../src/calls/iceServers.js';
import { ConfigError, loadConfig } from '../../src/config.js';

const turn = { urls: ['turn:turn.example.org:3478', 'turns:turn.example.org:5349'], secret: '0123456789abcdef-secret', ttlSeconds: 3600 };

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('ICE servers of a join', () => {
  it('gives coturn use-auth-secret credentials: <expiry>:<user>, base64 HMAC-SHA1 of the username', () => {
    // The expected password was computed outside this code: python3 hmac.new(secret, username, sha1).
    const at = (1_795_000_000 - 3600) * 1000 + 999;
    expect(turnCredentials(turn, 'ch_abc_a', at)).toEqual({
      urls: turn.urls,
      username: '1795000000:ch_abc_a',
      credential: 'ffZ3yAv1bOIyus6GC5AXGdV+/6A=',
    });
  });

  it('gives each side and each moment its own credentials, expiring ttl seconds after the join', () => {
    const now = 1_800_000_000_000;
    const agent = turnCredentials(turn, 'ch_x_a', now);
    const customer = turnCredentials(turn, 'ch_x_c', now);
    const later = turnCredentials(turn, 'ch_x_a', now + 60_000);
    expect(agent.username).toBe(`${1_800_000_000 + 3600}:ch_x_a`);
    expect(later.username).toBe(`${1_800_000_060 + 3600}:ch_x_a`);
    expect(new Set([agent.credential, customer.credential, later.credential]).size).toBe(3);
  });

  it('lists the configured servers first, and adds a TURN entry only when TURN is configured', () => {
    const stun = [{ urls: 'stun:stun.example.org:3478' }];
    expect(iceServersFor({ iceServers: stun, turn: undefined }, 'ch_x_a', 0)).toEqual(stun);
    expect(iceServersFor({ iceServers: [], turn: undefined }, 'ch_x_a', 0)).toEqual([]);
    const both = iceServersFor({ iceServers: stun, turn }, 'ch_x_a', 0);
    expect(both).toHaveLength(2);
    expect(both[0]).toEqual(stun[0]);
    expect(both[1]).toMatchObject({ urls: turn.urls, username: '3600:ch_x_a' });
  });
});

describe('ICE configuration', () => {
  it('defaults to no ICE server at all (never a third party silently)', () => {
    const config = loadConfig({});
    expect(config.iceServers).toEqual([]);
    expect(config.turn).toBeUndefined();
  });

  it('reads ICE_SERVERS and TURN_URLS + TURN_SECRET', () => {
    const config = loadConfig({
      ICE_SERVERS: '[{"urls":["stun:a.example.org","stun:b.example.org:3478"]},{"urls":"turn:t.example.org","username":"u","credential":"p"}]',
      TURN_URLS: 'turn:turn.example.org:3478?transport=udp, turns:turn.example.org:5349',
      TURN_SECRET: 'a-long-enough-secret',
      TURN_CREDENTIAL_TTL_SECONDS: '600',
    });
    expect(config.iceServers).toHaveLength(2);
    expect(config.turn).toEqual({ urls: ['turn:turn.example.org:3478?transport=udp', 'turns:turn.example.org:5349'], secret: 'a-long-enough-secret', ttlSeconds: 600 });
  });

  it('makes TURN credentials last 10 minutes by default, renewed every half of that', () => {
    const config = loadConfig({ TURN_URLS: 'turn:turn.example.org:3478', TURN_SECRET: 'a-long-enough-secret' });
    expect(config.turn!.ttlSeconds).toBe(600);
    expect(turnRenewalMs(config.turn!)).toBe(300_000);
  });

  it('names every problem of ICE_SERVERS, entry by entry', () => {
    expect(problemsOf({ ICE_SERVERS: 'not json' })).toEqual([expect.stringContaining('ICE_SERVERS must be a JSON array')]);
    expect(problemsOf({ ICE_SERVERS: '{"urls":"stun:x"}' })).toEqual([expect.stringContaining('ICE_SERVERS must be a JSON array')]);
    expect(problemsOf({ ICE_SERVERS: '[{"urls":"stun:ok"}, 3, {"urls":[]}, {"urls":"http://x"}, {"urls":"turn:t"}, {"urls":"stun:x","username":5}]' })).toEqual([
      'ICE_SERVERS[1] must be an object like {"urls":"stun:stun.example.org:3478"}',
      'ICE_SERVERS[2].urls must be a URL or a non-empty array of URLs',
      'ICE_SERVERS[3].urls: "http://x" is not a stun:, stuns:, turn: or turns: URL',
      'ICE_SERVERS[4] is a TURN server: give "username" and "credential", or use TURN_URLS and TURN_SECRET for per-join credentials',
      'ICE_SERVERS[5].username must be a string',
    ]);
  });

  it('wants TURN_URLS and TURN_SECRET together, a turn: URL, a secret of 16 characters, and never prints it', () => {
    expect(problemsOf({ TURN_URLS: 'turn:t.example.org' })).toEqual([expect.stringContaining('TURN_SECRET is not')]);
    expect(problemsOf({ TURN_SECRET: 'a-long-enough-secret' })).toEqual([expect.stringContaining('TURN_URLS is not')]);
    const problems = problemsOf({ TURN_URLS: 'stun:t.example.org', TURN_SECRET: 'short-secret' });
    expect(problems).toEqual([
      'TURN_URLS: "stun:t.example.org" is not a turn: or turns: URL',
      'TURN_SECRET must be at least 16 characters (e.g. openssl rand -hex 32)',
    ]);
    expect(problems.join('\n')).not.toContain('short-secret');
    expect(problemsOf({ TURN_URLS: 'turn:t', TURN_SECRET: 'a-long-enough-secret', TURN_CREDENTIAL_TTL_SECONDS: '5' })).toEqual([
      expect.stringContaining('TURN_CREDENTIAL_TTL_SECONDS must be a whole number from 60'),
    ]);
  });
});
