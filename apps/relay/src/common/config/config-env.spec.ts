import { loadConfig } from './config';
import { ConfigError, envFlag, envList, envNumber, flagValue, numberValue, PORT } from './config-env';

describe('settings from the environment: one rule for flags, one for numbers, one error', () => {
  it('flags: 1/true/yes/on and 0/false/no/off in any case; unset or blank is the default; anything else is refused by name', () => {
    for (const on of ['1', 'true', 'YES', ' On ']) expect(envFlag({ X: on }, 'X', false)).toBe(true);
    for (const off of ['0', 'False', 'no', 'OFF']) expect(envFlag({ X: off }, 'X', true)).toBe(false);
    expect(envFlag({}, 'X', true)).toBe(true);
    expect(envFlag({ X: '  ' }, 'X', true)).toBe(true);
    expect(() => envFlag({ X: 'enabled' }, 'X', false)).toThrow(ConfigError);
    expect(() => envFlag({ X: 'enabled' }, 'X', false)).toThrow('X must be 1, true, yes or on (0, false, no or off), got "enabled"');
  });

  it('a flag from YAML or a profile .env: booleans, 0/1 and the words; null for anything else', () => {
    expect([true, false, 1, 0, 'yes', 'off', 2, 'maybe', '', null].map(flagValue)).toEqual([
      true,
      false,
      true,
      false,
      true,
      false,
      null,
      null,
      null,
      null,
    ]);
  });

  it('numbers: bounds inclusive (or above the minimum), whole when asked; blank is the default; the error names the variable and its range', () => {
    const rule = { default: 7, min: 1, max: 10, integer: true };
    expect(envNumber({}, 'N', rule)).toBe(7);
    expect(envNumber({ N: ' ' }, 'N', rule)).toBe(7);
    expect(envNumber({ N: '10' }, 'N', rule)).toBe(10);
    for (const bad of ['0', '11', '2.5', 'ten', 'Infinity'])
      expect(() => envNumber({ N: bad }, 'N', rule)).toThrow(`N must be 1-10 (a whole number), got "${bad}"`);
    expect(envNumber({ N: '0.5' }, 'N', { default: 1, min: 0, max: 2, above: true })).toBe(0.5);
    expect(() => envNumber({ N: '0' }, 'N', { default: 1, min: 0, max: 2, above: true })).toThrow('N must be above 0 and at most 2, got "0"');
    expect(numberValue('8642', { ...PORT, min: 1 })).toBe(8642);
    expect([numberValue('0', { ...PORT, min: 1 }), numberValue('', PORT), numberValue(true, PORT)]).toEqual([null, null, null]);
  });

  it('lists: comma-separated, trimmed, blanks dropped', () => {
    expect(envList({ L: ' a, ,b ' }, 'L')).toEqual(['a', 'b']);
    expect(envList({}, 'L')).toEqual([]);
  });

  it('every flag of the relay reads the same words (the documented ones: RELAY_PROFILE_DISCOVERY=0, PHONE_ENABLED=1)', () => {
    const base = { SVC_HOME: '/srv/svc' };
    const on = loadConfig({
      ...base,
      PHONE_ENABLED: 'on',
      RELAY_PROVIDER_USAGE_ENABLED: 'true',
      RELAY_SECURE_LINK_ENABLED: 'yes',
      RELAY_EXPERIMENTAL_REACH_ENABLED: '1',
      RELAY_ALLOW_INSECURE_API_BEARER: 'On',
      RELAY_TRUST_PROXY_HEADERS: 'TRUE',
      RELAY_REALTIME_VOICE_ENABLED: 'yes',
      RELAY_MEDIA_STRICT_SANDBOX: 'true',
      API_SERVER_ENABLED: 'on',
    });
    expect([
      on.phoneEnabled,
      on.providerUsageEnabled,
      on.secureLink.enabled,
      on.secureLink.reach.enabled,
      on.allowInsecureApiBearer,
      on.trustProxyHeaders,
      on.realtimeVoiceEnabled,
      on.media.strictSandbox,
      on.apiServer.enabled,
    ]).toEqual([true, true, true, true, true, true, true, true, true]);
    expect(loadConfig({ ...base, RELAY_PROFILE_DISCOVERY: '0' }).profileDiscovery).toBe(false);
    expect(loadConfig({ ...base, RELAY_PROFILE_DISCOVERY: '' }).profileDiscovery).toBe(true);
    expect(loadConfig({ ...base, API_SERVER_KEY: 'k' }).apiServer.enabled).toBe(true);
    expect(loadConfig({ ...base, API_SERVER_KEY: 'k', API_SERVER_ENABLED: 'off' }).apiServer.enabled).toBe(false);
    expect(() => loadConfig({ ...base, PHONE_ENABLED: 'please' })).toThrow(/PHONE_ENABLED must be/);
  });

  it('ports: RELAY_PORT (0 picks a free one), API_SERVER_PORT and RELAY_SECURE_LINK_PORT by the same rule', () => {
    const base = { SVC_HOME: '/srv/svc' };
    expect(loadConfig(base)).toMatchObject({ port: 8767, apiServer: { url: 'http://127.0.0.1:8642' }, secureLink: { port: 9443 } });
    expect(loadConfig({ ...base, RELAY_PORT: '0', API_SERVER_PORT: '9000' })).toMatchObject({ port: 0, apiServer: { url: 'http://127.0.0.1:9000' } });
    expect(() => loadConfig({ ...base, RELAY_PORT: 'eighty' })).toThrow('RELAY_PORT/--port must be 0-65535 (a whole number), got "eighty"');
    expect(() => loadConfig({ ...base, API_SERVER_PORT: '0' })).toThrow('API_SERVER_PORT must be 1-65535');
    expect(() => loadConfig({ ...base, RELAY_SECURE_LINK_PORT: '70000' })).toThrow('RELAY_SECURE_LINK_PORT must be 0-65535');
  });

  it('the socket bounds (issue 34): their defaults, MiB with fractions for the buffer, seconds for the ping; out of range is refused by name', () => {
    const home = { SVC_HOME: '/tmp/svc-config-spec' };
    const d = loadConfig(home);
    expect(d.sockets).toEqual({ bufferBytes: 8 * 1024 * 1024, queuedFrames: 64, framesPerSecond: 200, frameBurst: 2000 });
    expect(d.pingIntervalMs).toBe(30_000);
    const set = loadConfig({ ...home, RELAY_SOCKET_BUFFER_MB: '0.5', RELAY_SOCKET_FRAMES_PER_SECOND: '50', RELAY_SOCKET_PING_SECONDS: '10' });
    expect(set.sockets).toMatchObject({ bufferBytes: 512 * 1024, framesPerSecond: 50 });
    expect(set.pingIntervalMs).toBe(10_000);
    expect(() => loadConfig({ ...home, RELAY_SOCKET_BUFFER_MB: '0' })).toThrow('RELAY_SOCKET_BUFFER_MB must be above 0 and at most 1024');
    expect(() => loadConfig({ ...home, RELAY_SOCKET_FRAME_BURST: '1.5' })).toThrow('RELAY_SOCKET_FRAME_BURST must be 1-10000000 (a whole number)');
    expect(() => loadConfig({ ...home, RELAY_SOCKET_PING_SECONDS: '0' })).toThrow('RELAY_SOCKET_PING_SECONDS must be 1-3600');
  });

  it('/mcp session bounds: 4 per device, 64 in all, an hour idle, each a whole number in its range', () => {
    const base = { SVC_HOME: '/srv/svc' };
    expect(loadConfig(base).bridge.mcpSessions).toEqual({ perDevice: 4, total: 64, idleMs: 3_600_000 });
    const set = { ...base, RELAY_MCP_SESSIONS_PER_DEVICE: '2', RELAY_MCP_MAX_SESSIONS: '16', RELAY_MCP_IDLE_MINUTES: '5' };
    expect(loadConfig(set).bridge.mcpSessions).toEqual({ perDevice: 2, total: 16, idleMs: 300_000 });
    expect(() => loadConfig({ ...base, RELAY_MCP_SESSIONS_PER_DEVICE: '0' })).toThrow('RELAY_MCP_SESSIONS_PER_DEVICE must be 1-64');
    expect(() => loadConfig({ ...base, RELAY_MCP_IDLE_MINUTES: '1.5' })).toThrow('RELAY_MCP_IDLE_MINUTES must be 1-10080 (a whole number)');
  });

  it('profile file caps: 1 MiB SOUL and memory file (what the app writes), 8 MiB a memory listing, each whole bytes in range', () => {
    const base = { SVC_HOME: '/srv/svc' };
    expect(loadConfig(base).profileFiles).toEqual({ soulMaxBytes: 1_048_576, memoryMaxBytes: 1_048_576, memoryListMaxBytes: 8_388_608 });
    expect(loadConfig({ ...base, RELAY_PROFILE_SOUL_MAX_BYTES: '204800' }).profileFiles.soulMaxBytes).toBe(204_800);
    expect(() => loadConfig({ ...base, RELAY_PROFILE_MEMORY_MAX_BYTES: '100' })).toThrow('RELAY_PROFILE_MEMORY_MAX_BYTES must be 4096-16777216');
    expect(() => loadConfig({ ...base, RELAY_PROFILE_MEMORY_LIST_MAX_BYTES: '1e12' })).toThrow(
      'RELAY_PROFILE_MEMORY_LIST_MAX_BYTES must be 4096-268435456',
    );
  });
});
