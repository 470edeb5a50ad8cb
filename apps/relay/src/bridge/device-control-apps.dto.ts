import { MEDIA_ACTIONS } from '@svc/domain';
import { IsBoolean, IsIn, IsOptional, IsString, Length, Matches, MaxLength } from '../common/http/validators';
import { SelectorBody } from './device-control.dto';
import { Package, SmallObject } from './device-control-validators';

/* Apps and the system (WIRE.md): opening an app, the clipboard, media keys, intents and broadcasts, the event stream. */

export class OpenAppDto extends SelectorBody {
  @Package()
  package!: string;
}

export class ClipboardSetDto extends SelectorBody {
  @IsString()
  @MaxLength(100_000)
  text!: string;
}

export class MediaDto extends SelectorBody {
  @IsIn(MEDIA_ACTIONS, { message: `action must be one of ${MEDIA_ACTIONS.join(', ')}` })
  action!: string;
}

export class BroadcastDto extends SelectorBody {
  @IsString()
  @Length(1, 256)
  @Matches(/^[A-Za-z0-9_.$-]+$/, { message: 'action must be an intent action like android.intent.action.VIEW' })
  action!: string;

  @IsOptional()
  @IsString()
  @MaxLength(2048)
  data?: string;

  @IsOptional()
  @Package()
  package?: string;

  @IsOptional()
  @SmallObject(16_384)
  extras?: Record<string, unknown>;
}

export class SendIntentDto extends BroadcastDto {
  @IsOptional()
  @IsString()
  @MaxLength(512)
  @Matches(/^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+\/[A-Za-z0-9_.$]+$/, { message: 'component must be package/class' })
  component?: string;

  @IsOptional()
  @IsString()
  @MaxLength(256)
  category?: string;
}

export class EventsStreamDto extends SelectorBody {
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled!: boolean;
}
