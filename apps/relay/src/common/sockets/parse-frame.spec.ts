import 'reflect-metadata';
import { BadRequestException } from '@nestjs/common';
import { DomainError } from '@svc/domain';
import { Transform, Type } from 'class-transformer';
import { Check, coded, RefuseNonObject, RefuseUnknownKeys } from '../http/dto-refusals';
import { parseFrame } from './parse-frame';
import { RelayValidationPipe } from '../http/validation';
import { IsArray, IsInt, IsOptional, IsString, MaxLength, Min, ValidateNested } from '../http/validators';

class Item {
  @IsString({ message: 'name must be a string' })
  name!: string;
}

class Frame {
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsString({ message: 'text must be a string' })
  @MaxLength(5, { message: 'text is at most 5 characters' })
  text!: string;

  @IsOptional()
  @IsInt({ message: 'count must be a whole number' })
  @Min(0, { message: 'count must be >= 0' })
  count?: number;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => Item)
  items?: Item[];
}

describe('parseFrame', () => {
  it('gives an instance of the DTO, transformed, with undeclared properties dropped', () => {
    const r = parseFrame(Frame, { type: 'x', text: '  hi ', count: 2, extra: 'dropped' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).toBeInstanceOf(Frame);
    expect({ ...r.value }).toEqual({ text: 'hi', count: 2 });
  });

  it('refuses with a validation_failed DomainError naming every problem once, and throws nothing', () => {
    const r = parseFrame(Frame, { text: 'far too long', count: -1.5 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toBeInstanceOf(DomainError);
    expect(r.error.code).toBe('validation_failed');
    expect(r.error.kind).toBe('invalid');
    expect(r.error.message.split('; ').sort()).toEqual(['count must be >= 0', 'count must be a whole number', 'text is at most 5 characters']);
  });

  it('says a message shared by several fields once', () => {
    class Counts {
      @IsInt({ message: 'a and b are whole numbers' }) a!: number;
      @IsInt({ message: 'a and b are whole numbers' }) b!: number;
    }
    expect(parseFrame(Counts, { a: 'x', b: 'y' })).toMatchObject({ ok: false, error: { message: 'a and b are whole numbers' } });
  });

  it('prefixes a nested problem with its path', () => {
    const r = parseFrame(Frame, { text: 'ok', items: [{ name: 'a' }, { name: 3 }] });
    expect(r.ok ? null : r.error.message).toBe('items.1.name must be a string');
  });

  it('refuses what is not a JSON object: null, an array, a string', () => {
    for (const payload of [null, undefined, ['text'], 'text', 5])
      expect(parseFrame(Frame, payload)).toMatchObject({
        ok: false,
        error: { code: 'validation_failed', message: 'the frame must be a JSON object' },
      });
  });

  it('never copies __proto__ or constructor from the payload', () => {
    const payload = JSON.parse('{"text": "ok", "__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}') as unknown;
    const r = parseFrame(Frame, payload);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(Object.getPrototypeOf(r.value)).toBe(Frame.prototype);
    expect((r.value as unknown as { polluted?: boolean }).polluted).toBeUndefined();
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('words a refusal as the HTTP pipe does for the same DTO', async () => {
    const payload = { text: 7, items: [{ name: 1 }] };
    const http = await new RelayValidationPipe().transform(payload, { type: 'body', metatype: Frame }).then(
      () => null,
      (e: BadRequestException) => (e.getResponse() as { message: string[] }).message.join('; '),
    );
    const frame = parseFrame(Frame, payload);
    expect(frame.ok ? null : frame.error.message).toBe(http);
  });

  it('bounds a refusal to ten problems', () => {
    class Many {
      @IsOptional()
      @IsArray()
      @ValidateNested({ each: true })
      @Type(() => Item)
      items?: Item[];
    }
    const r = parseFrame(Many, { items: Array.from({ length: 50 }, (_, i) => ({ name: i })) });
    expect(r.ok ? [] : r.error.message.split('; ')).toHaveLength(11);
  });

  it('answers the code a failing rule names, as the HTTP pipe does, with its extra fields', () => {
    @RefuseNonObject('x.bad_frame', 'x.thing needs {size}')
    @RefuseUnknownKeys('x.bad_key', (key) => `x.thing: unknown field ${key}`)
    class Sized {
      @IsOptional()
      @IsString({ message: 'note must be a string' })
      note?: string;

      @Check('sizeInRange', (v) => Number.isInteger(v) && (v as number) >= 1, coded('x.bad_size', 'size: a whole number >= 1', { field: 'size' }))
      size!: number;
    }
    expect(parseFrame(Sized, { size: 0 })).toMatchObject({
      ok: false,
      error: { code: 'x.bad_size', message: 'size: a whole number >= 1', extra: { field: 'size' } },
    });
    expect(parseFrame(Sized, { size: 0, note: 1 })).toMatchObject({
      ok: false,
      error: { code: 'x.bad_size', message: 'note must be a string; size: a whole number >= 1' },
    });
    expect(parseFrame(Sized, { size: 1, note: 1 })).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
    expect(parseFrame(Sized, ['size'])).toMatchObject({ ok: false, error: { code: 'x.bad_frame', message: 'x.thing needs {size}' } });
    expect(parseFrame(Sized, { size: 2, sise: 3 })).toMatchObject({
      ok: false,
      error: { code: 'x.bad_key', message: 'x.thing: unknown field sise' },
    });
    expect(parseFrame(Sized, { size: 2, note: 'n' })).toMatchObject({ ok: true, value: { size: 2, note: 'n' } });
  });
});
