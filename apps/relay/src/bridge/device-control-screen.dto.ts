import { IsBoolean, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from '../common/http/validators';
import { SelectorBody } from './device-control.dto';
import { NodeId } from './device-control-validators';

/* Reading the screen (WIRE.md): finding and describing nodes, comparing with an earlier screen. */

export class FindNodesDto extends SelectorBody {
  @IsOptional()
  @IsString()
  @MaxLength(500)
  text?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  class_name?: string;

  @IsOptional()
  @IsString()
  @MaxLength(256)
  resource_id?: string;

  @IsOptional()
  @IsBoolean()
  clickable?: boolean;

  /** android_tool.py sends `limit` (default 20); the app caps it at its walk budget. */
  @IsOptional()
  @IsInt({ message: 'limit must be a whole number' })
  @Min(1)
  @Max(512)
  limit?: number;
}

export class DescribeNodeDto extends SelectorBody {
  @NodeId()
  nodeId!: string | number;
}

export class DiffScreenDto extends SelectorBody {
  @IsString()
  @Matches(/^[A-Fa-f0-9]{8,128}$/, { message: 'previous_hash must be the hex hash /screen_hash returned' })
  previous_hash!: string;
}
