import { DEFAULT_SESSION_NAME, sessionNameOf, termDimension } from '@svc/domain';
import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { DomainRule } from '../common/http/dto-refusals';

/*
 * The `terminal` and `tui` channels' frames that carry fields, read with readFrame (parse-frame.ts). The
 * rules are the domain's (sessionNameOf, termDimension), so a refusal keeps its code and words. Not here:
 * `terminal.input`, the hot frame (every keystroke), read by hand in TerminalService.
 */

/** `session_name`: omitted (the field's initial value), null or empty is `main`. */
const SessionName = (): PropertyDecorator =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) => (value === undefined || value === null || value === '' ? DEFAULT_SESSION_NAME : value)),
    DomainRule('sessionName', 'terminal.bad_session_name', sessionNameOf),
  );

/** `cols` or `rows`; `optional`: absent or null names no size (attach keeps the shell's, or 80x24). */
const Dimension = (name: 'cols' | 'rows', optional: boolean): PropertyDecorator =>
  optional
    ? applyDecorators(
        Transform(({ value }: { value: unknown }) => (value === null ? undefined : value)),
        DomainRule(name, 'terminal.bad_size', (v) => v === undefined || termDimension(name, v)),
      )
    : DomainRule(name, 'terminal.bad_size', (v) => termDimension(name, v));

/** A frame naming one shell (`terminal.detach`, `terminal.kill`). */
export class TerminalSessionFrame {
  @SessionName() session_name: string = DEFAULT_SESSION_NAME;
}

/** `tui.resize {cols, rows}`. */
export class TermSizeFrame {
  @Dimension('cols', false) cols!: number;
  @Dimension('rows', false) rows!: number;
}

/** `tui.attach {cols?, rows?, ...}`: the tags are read by attachTag. */
export class OptionalTermSizeFrame {
  @Dimension('cols', true) cols?: number;
  @Dimension('rows', true) rows?: number;
}

/** `terminal.attach {session_name?, cols?, rows?}`. */
export class TerminalAttachFrame {
  @SessionName() session_name: string = DEFAULT_SESSION_NAME;
  @Dimension('cols', true) cols?: number;
  @Dimension('rows', true) rows?: number;
}

/** `terminal.resize {session_name?, cols, rows}`. */
export class TerminalResizeFrame {
  @SessionName() session_name: string = DEFAULT_SESSION_NAME;
  @Dimension('cols', false) cols!: number;
  @Dimension('rows', false) rows!: number;
}
