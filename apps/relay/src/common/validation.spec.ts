import 'reflect-metadata';
import { BadRequestException, type ArgumentMetadata } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, IsString, MaxLength } from './validators';
import { RelayValidationPipe } from './validation';

class OptionalQuery {
  @IsOptional()
  @IsString()
  @MaxLength(8)
  device?: string;

  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (value === undefined ? false : value === 'true'))
  @IsBoolean()
  verbose?: boolean;
}

class RequiredBody {
  @IsString()
  text!: string;
}

const query = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'query', metatype, data: undefined });

describe('RelayValidationPipe', () => {
  it('turns an empty query into a fresh DTO instance each time, which callers cannot share by mutation', async () => {
    const pipe = new RelayValidationPipe();
    const a = (await pipe.transform({}, query(OptionalQuery))) as OptionalQuery;
    const b = (await pipe.transform(Object.create(null), query(OptionalQuery))) as OptionalQuery;
    expect(a).toBeInstanceOf(OptionalQuery);
    expect(b).toBeInstanceOf(OptionalQuery);
    expect(b).not.toBe(a);
    a.device = 'changed';
    const c = (await pipe.transform({}, query(OptionalQuery))) as OptionalQuery;
    expect(c.device).toBeUndefined();
    expect({ ...c }).toEqual({ ...b });
  });

  it('refuses an empty body every time when the DTO needs a field', async () => {
    const pipe = new RelayValidationPipe();
    for (let i = 0; i < 3; i++) {
      await expect(pipe.transform({}, { type: 'body', metatype: RequiredBody })).rejects.toBeInstanceOf(BadRequestException);
    }
  });

  it('validates every non-empty value in full: bad values are refused, unknown properties stripped', async () => {
    const pipe = new RelayValidationPipe();
    await pipe.transform({}, query(OptionalQuery)); // the shortcut is primed
    await expect(pipe.transform({ device: 'far-too-long-a-name' }, query(OptionalQuery))).rejects.toBeInstanceOf(BadRequestException);
    const stripped = (await pipe.transform({ nope: '1', device: 'pixel' }, query(OptionalQuery))) as Record<string, unknown>;
    expect(stripped).toBeInstanceOf(OptionalQuery);
    expect(stripped.nope).toBeUndefined();
    await expect(pipe.transform({ device: 'pixel' }, query(OptionalQuery))).resolves.toMatchObject({ device: 'pixel' });
  });

  it('never shares a default object or array between requests: such a DTO is validated in full each time', async () => {
    class WithDefaults {
      @IsOptional()
      @IsString({ each: true })
      tags: string[] = [];
    }
    const pipe = new RelayValidationPipe();
    const a = (await pipe.transform({}, query(WithDefaults))) as WithDefaults;
    a.tags.push('mine');
    const b = (await pipe.transform({}, query(WithDefaults))) as WithDefaults;
    expect(b.tags).toEqual([]);
  });

  it('leaves values without a DTO class alone', async () => {
    const pipe = new RelayValidationPipe();
    const raw = {};
    await expect(pipe.transform(raw, { type: 'custom', metatype: undefined, data: undefined })).resolves.toBe(raw);
  });
});
