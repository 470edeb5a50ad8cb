import { applyDecorators } from '@nestjs/common';
import {
  AUTO_DISABLE_MAX_MINUTES,
  reportedStatusValue,
  statusFieldRule,
  statusGroupRule,
  type BridgeStatusField,
  type BridgeStatusFields,
  type BridgeStatusGroup,
} from '@svc/domain';
import { Expose, Transform } from 'class-transformer';
import { coded, DomainRule } from '../common/http/dto-refusals';
import { IsBoolean, IsString } from '../common/http/validators';

/*
 * The `bridge` channel's frames from the phone that carry fields, read with readFrame (parse-frame.ts);
 * a refusal is `bad_frame` in the words the app has always had. Not here: `bridge.response`, the answer
 * to a command, which can carry a whole screen tree or an inline screenshot and is read by hand
 * (readBridgeResponse) at a fraction of the cost.
 */

/** A group of the app's nested shape (`bridge {}`, `safety {}`, `device {}`): absent, null or an object. */
const Group = (group: BridgeStatusGroup): PropertyDecorator => DomainRule(group, 'bad_frame', (v) => statusGroupRule(group, v));

/** A field read where the domain says it may be (nested before flat), then checked by the domain's rule. */
const Reported = (field: BridgeStatusField): PropertyDecorator =>
  applyDecorators(
    // Exposed: read even when only a group holds it.
    Expose(),
    Transform(({ obj }: { obj: Record<string, unknown> }) => reportedStatusValue(obj, field)),
    DomainRule(field, 'bad_frame', (v) => statusFieldRule(field, v, AUTO_DISABLE_MAX_MINUTES)),
  );

/** `bridge.status` (also `status`), in either shape; the fields in the order the refusals name them. */
export class BridgeStatusFrame implements BridgeStatusFields {
  @Group('bridge') bridge?: Record<string, unknown> | null;
  @Group('safety') safety?: Record<string, unknown> | null;
  @Group('device') device?: Record<string, unknown> | null;
  @Reported('screen_on') screen_on?: boolean;
  @Reported('accessibility_enabled') accessibility_enabled?: boolean;
  @Reported('master_enabled') master_enabled?: boolean;
  @Reported('device_control_supported') device_control_supported?: boolean;
  @Reported('battery') battery?: number;
  @Reported('current_app') current_app?: string;
  @Reported('trusted_destructive_verbs') trusted_destructive_verbs?: string[];
  @Reported('auto_disable_minutes') auto_disable_minutes?: number;
}

const CONFIRM_RESULT = coded('bad_frame', 'bridge.confirm.result needs request_id (string) and allow (boolean)');

/** `bridge.confirm.result {request_id, allow}` (also `confirm.result`): the user's answer to a `bridge.confirm`. */
export class ConfirmResultFrame {
  @IsString(CONFIRM_RESULT) request_id!: string;
  @IsBoolean(CONFIRM_RESULT) allow!: boolean;
}
