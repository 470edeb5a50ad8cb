import { Transform } from 'class-transformer';
import { DomainRule } from '../common/http/dto-refusals';
import { OptionalTermSizeFrame } from '../terminal/terminal-frames.dto';
import { attachTag } from './tui-rpc';

/*
 * The `tui` channel's `tui.attach`, read with readFrame (parse-frame.ts): the size by the terminal's rules
 * (OptionalTermSizeFrame), the tags the gateway's environment may carry by attachTag (`tui.bad_attach`, its
 * words). `tui.resize` is TermSizeFrame. Not here: `tui.rpc.request`, every request of the TUI passed to
 * the gateway as its JSON-RPC line, read by hand (rpcLine).
 */

/** An attach tag: absent, null or empty is none. */
const Tag =
  (name: 'profile' | 'resume_session_id'): PropertyDecorator =>
  (target, key) => {
    Transform(({ value }: { value: unknown }) => (value === '' ? null : value))(target, key);
    DomainRule(name, 'tui.bad_attach', (v) => attachTag(v, name))(target, key);
  };

/** `tui.attach {cols?, rows?, profile?, resume_session_id?}`. */
export class TuiAttachFrame extends OptionalTermSizeFrame {
  @Tag('profile') profile: string | null = null;
  @Tag('resume_session_id') resume_session_id: string | null = null;
}
