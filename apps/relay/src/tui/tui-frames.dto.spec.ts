import 'reflect-metadata';
import { parseFrame } from '../common/sockets/parse-frame';
import { TuiAttachFrame } from './tui-frames.dto';

/** The refusal of a frame: its code and message, as the CLI's `tui.error` carries them. */
const refusal = (payload: object) => {
  const r = parseFrame(TuiAttachFrame, payload);
  return r.ok ? null : { code: r.error.code, message: r.error.message };
};

describe('tui frames', () => {
  it('tui.attach: a tag that is not one is tui.bad_attach, a size the terminal’s refusal, in their words', () => {
    expect(refusal({ profile: '../etc' })).toEqual({ code: 'tui.bad_attach', message: 'profile: up to 128 of A-Z a-z 0-9 . _ : @ -' });
    expect(refusal({ resume_session_id: 7 })).toEqual({ code: 'tui.bad_attach', message: 'resume_session_id: up to 128 of A-Z a-z 0-9 . _ : @ -' });
    expect(refusal({ cols: 0 })).toEqual({ code: 'terminal.bad_size', message: 'cols: an integer from 1 to 1000 is required' });
  });

  it('tui.attach: absent, null or empty tags are none; the size as given or none', () => {
    const r = parseFrame(TuiAttachFrame, { cols: 100, profile: '', resume_session_id: null, extra: 1 });
    expect(r.ok && { ...r.value }).toEqual({ cols: 100, profile: null, resume_session_id: null });
    const tagged = parseFrame(TuiAttachFrame, { profile: 'work', resume_session_id: 'sess:1@a' });
    expect(tagged.ok && { ...tagged.value }).toEqual({ profile: 'work', resume_session_id: 'sess:1@a' });
  });
});
