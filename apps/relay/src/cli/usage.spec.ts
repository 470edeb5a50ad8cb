import { HELP } from './usage';

describe('svc relay pair --help', () => {
  const text = HELP['relay pair'];

  it('says the defaults and the channels the grant table holds', () => {
    expect(text).toContain('(default 30d)');
    expect(text).toContain('their defaults (chat, voice: session; terminal, tui: 30d; bridge: 7d).');
    expect(text).toContain(
      [
        '                        Channels: chat, terminal, tui, bridge, voice:config, voice:stt, voice:tts,',
        '                        voice:realtime, desktop',
      ].join('\n'),
    );
  });
});
