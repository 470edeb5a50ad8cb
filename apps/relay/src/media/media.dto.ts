import * as path from 'node:path';
import { Check, coded } from '../common/http/dto-refusals';
import { IsBoolean, IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from '../common/http/validators';
import { CONTENT_TYPE_RE } from './media-http';

const FILE_NAME_RE = /^[^\x00-\x1f\x7f/\\]+$/;

export class RegisterMediaDto {
  @IsString({ message: 'path must be a string (an absolute path on the relay host)' })
  @IsNotEmpty({ message: 'path is required' })
  @MaxLength(4096, { message: 'path must be at most 4096 characters' })
  @Matches(/^\/[^\x00]*$/, { message: 'path must be an absolute path (starting with /) without NUL bytes' })
  path!: string;

  @IsOptional()
  @IsString({ message: 'content_type must be a string like image/png' })
  @MaxLength(255, { message: 'content_type must be at most 255 characters' })
  @Matches(CONTENT_TYPE_RE, { message: 'content_type must be a media type like image/png (type/subtype, optional parameters)' })
  content_type?: string;

  @IsOptional()
  @IsString({ message: 'file_name must be a string' })
  @MaxLength(255, { message: 'file_name must be at most 255 characters' })
  @Matches(FILE_NAME_RE, { message: 'file_name must be a plain name: no / or \\ and no control characters' })
  file_name?: string;

  @IsOptional()
  @IsBoolean({ message: 'owned_file must be true or false' })
  owned_file?: boolean;

  @IsOptional()
  @IsBoolean({ message: 'sensitive must be true or false' })
  sensitive?: boolean;
}

/** The JSON upload form (WIRE.md): base64 content. */
export class UploadJsonDto {
  @IsOptional()
  @IsString({ message: 'file_name must be a string' })
  @MaxLength(255, { message: 'file_name must be at most 255 characters' })
  file_name?: string;

  @IsOptional()
  @IsString({ message: 'content_type must be a string like image/png' })
  @MaxLength(255, { message: 'content_type must be at most 255 characters' })
  @Matches(CONTENT_TYPE_RE, { message: 'content_type must be a media type like image/png (type/subtype, optional parameters)' })
  content_type?: string;

  @IsString({ message: 'content must be the file as a base64 string' })
  content!: string;

  @IsOptional()
  @IsBoolean({ message: 'sensitive must be true or false' })
  sensitive?: boolean;
}

export class MarkersDto {
  @IsString({ message: 'text must be a string' })
  @MaxLength(1_000_000, { message: 'text must be at most 1000000 characters' })
  text!: string;
}

/** `GET /media/by-path?path=&content_type=`: an absolute path on the relay host, and the type to answer with. */
export class MediaByPathQuery {
  @Check('pathGiven', (v) => typeof v === 'string' && v !== '', coded('media.path_required', 'path: the query parameter path is required'))
  @Check(
    'absolutePath',
    (v) => typeof v !== 'string' || v === '' || (path.isAbsolute(v) && !v.includes('\0') && v.length <= 4096),
    coded('media.bad_path', 'path must be an absolute path (starting with /) without NUL bytes'),
  )
  path!: string;

  @IsOptional()
  @Check('mediaType', (v) => typeof v === 'string' && CONTENT_TYPE_RE.test(v) && v.length <= 255, {
    message: 'content_type must be a media type like image/png',
  })
  content_type?: string;
}
