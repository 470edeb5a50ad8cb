import 'reflect-metadata';
import { BadRequestException, type ArgumentMetadata } from '@nestjs/common';
import { DomainError } from '@svc/domain';
import { Transform, Type } from 'class-transformer';
import { Check, coded, RefuseNonObject, RefuseUnknownKeys } from './dto-refusals';
import { toErrorResponse } from './http-errors';
import { IsBoolean, IsInt, IsOptional, IsString, Matches, MaxLength, ValidateNested } from './validators';
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

class Inner {
  @IsString(coded('x.bad_name', 'name must be a string'))
  name!: string;
}

@RefuseNonObject('x.bad_body', 'send a JSON object {kind, size}')
class CodedBody {
  @IsOptional()
  @IsInt({ message: 'count must be a whole number' })
  count?: number;

  @Matches(/^[a-z]+$/, coded('x.bad_kind', 'kind: lower-case letters', { field: 'kind' }))
  kind!: string;

  @IsOptional()
  @Check('sizeInRange', (v) => typeof v === 'number' && v >= 1 && v <= 9, coded('x.bad_size', 'size: 1-9'))
  size?: number;

  @IsOptional()
  @ValidateNested()
  @Type(() => Inner)
  inner?: Inner;
}

class Filter {
  @IsOptional()
  @Matches(/^[a-z]+$/, { message: 'chat: lower-case letters' })
  chat?: string;
}

@RefuseUnknownKeys('x.bad_query', (key) => `unknown query parameter ${key}: use chat or id`)
class StrictFilter extends Filter {
  @IsOptional()
  @IsString()
  id?: string;
}

/** What the HTTP client reads for a value the pipe refuses. */
async function answer(value: unknown, metatype: ArgumentMetadata['metatype'], type: ArgumentMetadata['type'] = 'body') {
  const err = await new RelayValidationPipe().transform(value, { type, metatype, data: undefined }).then(
    () => null,
    (e: unknown) => e,
  );
  return err === null ? null : toErrorResponse(err);
}

describe('RelayValidationPipe: codes named by the DTO', () => {
  it('answers the code of a failing rule that names one: 400 {ok: false, error, code}, with its extra fields', async () => {
    expect(await answer({ kind: 'UPPER' }, CodedBody)).toEqual({
      status: 400,
      body: { ok: false, error: 'kind: lower-case letters', code: 'x.bad_kind', field: 'kind' },
    });
    expect(await answer({ kind: 'ok', size: 12 }, CodedBody)).toEqual({ status: 400, body: { ok: false, error: 'size: 1-9', code: 'x.bad_size' } });
  });

  it('keeps validation_failed when no failing rule names a code, and every message joined either way', async () => {
    expect(await answer({ kind: 'ok', count: 1.5 }, CodedBody)).toEqual({
      status: 400,
      body: { ok: false, error: 'count must be a whole number', code: 'validation_failed' },
    });
    // The uncoded failure comes first; the code is the coded one's, the message names both.
    expect(await answer({ kind: 'UPPER', count: 1.5 }, CodedBody)).toEqual({
      status: 400,
      body: { ok: false, error: 'count must be a whole number; kind: lower-case letters', code: 'x.bad_kind', field: 'kind' },
    });
  });

  it('takes the first coded failure in declaration order, nested rules included (with their path)', async () => {
    expect((await answer({ kind: '1', size: 0 }, CodedBody))?.body).toMatchObject({
      code: 'x.bad_kind',
      error: 'kind: lower-case letters; size: 1-9',
    });
    expect((await answer({ kind: 'ok', inner: { name: 3 } }, CodedBody))?.body).toMatchObject({
      code: 'x.bad_name',
      error: 'inner.name must be a string',
    });
  });

  it("refuses a body that is not an object with the DTO's own code, before any rule", async () => {
    for (const body of [null, undefined, [], ['kind'], 'kind', 3])
      expect((await answer(body, CodedBody))?.body).toEqual({ ok: false, error: 'send a JSON object {kind, size}', code: 'x.bad_body' });
    // Without the decorator a non-object is refused as before: by its rules, validation_failed.
    expect((await answer('text', RequiredBody))?.body).toMatchObject({ code: 'validation_failed' });
  });

  it('refuses an undeclared key by name where the DTO says so, once the declared ones pass; elsewhere it is dropped', async () => {
    expect(await answer({ chat: 'home', id: 'x', chta: 'typo' }, StrictFilter, 'query')).toEqual({
      status: 400,
      body: { ok: false, error: 'unknown query parameter chta: use chat or id', code: 'x.bad_query' },
    });
    expect((await answer({ chat: 'BAD', chta: 'typo' }, StrictFilter, 'query'))?.body).toMatchObject({ code: 'validation_failed' });
    await expect(new RelayValidationPipe().transform({ chat: 'home' }, query(StrictFilter))).resolves.toMatchObject({ chat: 'home' });
    await expect(new RelayValidationPipe().transform({}, query(StrictFilter))).resolves.toBeInstanceOf(StrictFilter);
    const loose = (await new RelayValidationPipe().transform({ chat: 'home', chta: 'typo' }, query(Filter))) as Record<string, unknown>;
    expect(loose.chta).toBeUndefined();
  });

  it("throws a DomainError for a coded refusal and Nest's BadRequestException otherwise (the voice routes' filter reads the latter)", async () => {
    const pipe = new RelayValidationPipe();
    await expect(pipe.transform({ kind: 'UPPER' }, { type: 'body', metatype: CodedBody })).rejects.toBeInstanceOf(DomainError);
    await expect(pipe.transform({ kind: 'ok', count: 'x' }, { type: 'body', metatype: CodedBody })).rejects.toBeInstanceOf(BadRequestException);
  });
});
