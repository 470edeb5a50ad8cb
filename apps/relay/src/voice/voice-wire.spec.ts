import { VoiceWire } from './voice-wire';

describe('VoiceWire', () => {
  it('writes every brand-named thing in the relay spelling', () => {
    const svc = new VoiceWire('svc');
    const hermes = new VoiceWire('hermes');
    expect(svc.protocol('output')).toBe('svc.voice.output.v0');
    expect(hermes.protocol('realtime_agent')).toBe('hermes.voice.realtime_agent.v0');
    expect(hermes.answerProtocol('realtime_voice', 'options')).toBe('hermes.voice.realtime.options.v0');
    expect(svc.frame('run.progress')).toBe('svc.run.progress');
    expect(hermes.frame('tool.started')).toBe('hermes.tool.started');
    expect(svc.tools).toEqual(['svc_run_task', 'svc_get_status', 'svc_cancel', 'svc_confirm']);
    expect(hermes.tools).toEqual(['hermes_run_task', 'hermes_get_status', 'hermes_cancel', 'hermes_confirm']);
  });

  it('reads both spellings of a tool call and of a client frame, nothing else', () => {
    const svc = new VoiceWire('svc');
    expect(svc.toolOf('hermes_run_task')).toBe('run_task');
    expect(svc.toolOf('svc_cancel')).toBe('cancel');
    expect(svc.toolOf('other_run_task')).toBeNull();
    expect(svc.toolOf('svc_run_task_x')).toBeNull();
    expect(VoiceWire.isBranded('hermes.confirm', 'confirm')).toBe(true);
    expect(VoiceWire.isBranded('svc.confirm', 'confirm')).toBe(true);
    expect(VoiceWire.isBranded('x.confirm', 'confirm')).toBe(false);
  });
});
