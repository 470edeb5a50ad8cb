import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from '../common/http/validators';
import { SelectorBody } from './device-control.dto';
import { MediaRef, Package, PhoneNumber } from './device-control-validators';

/* Contacts, calls and messages (WIRE.md), and sharing media: attachments are relay media tokens or host paths. */

export class SearchContactsDto extends SelectorBody {
  @IsString()
  @Length(1, 100)
  query!: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(50)
  limit?: number;
}

export class CallDto extends SelectorBody {
  @PhoneNumber()
  number!: string;
}

export class SendSmsDto extends SelectorBody {
  @PhoneNumber()
  to!: string;

  @IsString()
  @Length(1, 2000)
  body!: string;
}

/**
 * One attachment: a relay media token (`media` marker as android_tool.py sends it, `media_token`, or
 * `token`) or a host `path` (registered before forwarding), with an optional content type and name.
 */
export class AttachmentDto {
  @MediaRef('media')
  media?: string;

  @MediaRef('media_token')
  media_token?: string;

  @MediaRef('token')
  token?: string;

  @ValidateIf((o: AttachmentDto) => o.path !== undefined || [o.media, o.media_token, o.token].every((v) => v === undefined))
  @IsString({ message: 'an attachment needs media (MEDIA:svc-relay://<token>), media_token or path' })
  @MaxLength(4096)
  @Matches(/^\//, { message: 'path must be absolute' })
  @ValidateBy({
    name: 'notBoth',
    validator: {
      validate: (_v: unknown, a) => {
        const o = a?.object as AttachmentDto;
        return o.media === undefined && o.media_token === undefined && o.token === undefined;
      },
      defaultMessage: () => 'give a media token or a path, not both',
    },
  })
  path?: string;

  @IsOptional()
  @IsString()
  @MaxLength(128)
  content_type?: string;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  file_name?: string;
}

export class ShareMediaDto extends SelectorBody {
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateNested({ each: true })
  @Type(() => AttachmentDto)
  attachments?: AttachmentDto[];

  @ValidateIf((o: ShareMediaDto) => !o.attachments || o.attachments.length === 0)
  @IsString({ message: 'give text or at least one attachment' })
  @Length(1, 10_000)
  text?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  title?: string;

  @IsOptional()
  @Package()
  package?: string;
}

export class SendMmsDto extends SelectorBody {
  @PhoneNumber()
  to!: string;

  /** android_tool.py sends `body: ""` when there are attachments only. */
  @IsString()
  @MaxLength(5000)
  @ValidateBy({
    name: 'bodyOrAttachment',
    validator: {
      validate: (v: unknown, a) => (typeof v === 'string' && v.trim() !== '') || ((a?.object as SendMmsDto).attachments?.length ?? 0) > 0,
      defaultMessage: () => 'give at least one attachment or a body',
    },
  })
  body!: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10)
  @ValidateNested({ each: true })
  @Type(() => AttachmentDto)
  attachments?: AttachmentDto[];

  @IsOptional()
  @Package()
  package?: string;
}
