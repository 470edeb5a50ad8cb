/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * The one door to class-validator. `import ... from 'class-validator'` loads its whole index: every
 * decorator, all 113 modules of `validator` and libphonenumber's metadata, 320 modules that cost about
 * 70 ms of start-up and several MiB of heap (issue 12, bench/footprint.js). The relay uses 19 decorators;
 * each is required here from its own file (class-validator has no `exports` map, so these paths are its
 * published layout), typed from the package's declarations. The global ValidationPipe gets `validate` and
 * `getMetadataStorage` through `validatorPackage` (RELAY_VALIDATION) so Nest does not load the index either.
 * DTOs import from here; lint refuses a direct import of 'class-validator' elsewhere.
 */
import type * as CV from 'class-validator';

const cv = (file: string): Record<string, unknown> => require(`class-validator/cjs/${file}`) as Record<string, unknown>;

export const ArrayMaxSize = cv('decorator/array/ArrayMaxSize').ArrayMaxSize as typeof CV.ArrayMaxSize;
export const IsArray = cv('decorator/typechecker/IsArray').IsArray as typeof CV.IsArray;
export const IsBoolean = cv('decorator/typechecker/IsBoolean').IsBoolean as typeof CV.IsBoolean;
export const IsIn = cv('decorator/common/IsIn').IsIn as typeof CV.IsIn;
export const IsInt = cv('decorator/typechecker/IsInt').IsInt as typeof CV.IsInt;
export const IsNotEmpty = cv('decorator/common/IsNotEmpty').IsNotEmpty as typeof CV.IsNotEmpty;
export const IsNumber = cv('decorator/typechecker/IsNumber').IsNumber as typeof CV.IsNumber;
export const IsObject = cv('decorator/typechecker/IsObject').IsObject as typeof CV.IsObject;
export const IsOptional = cv('decorator/common/IsOptional').IsOptional as typeof CV.IsOptional;
export const IsString = cv('decorator/typechecker/IsString').IsString as typeof CV.IsString;
export const IsUrl = cv('decorator/string/IsUrl').IsUrl as typeof CV.IsUrl;
export const Length = cv('decorator/string/Length').Length as typeof CV.Length;
export const Matches = cv('decorator/string/Matches').Matches as typeof CV.Matches;
export const Max = cv('decorator/number/Max').Max as typeof CV.Max;
export const MaxLength = cv('decorator/string/MaxLength').MaxLength as typeof CV.MaxLength;
export const Min = cv('decorator/number/Min').Min as typeof CV.Min;
export const ValidateBy = cv('decorator/common/ValidateBy').ValidateBy as typeof CV.ValidateBy;
export const ValidateIf = cv('decorator/common/ValidateIf').ValidateIf as typeof CV.ValidateIf;
export const ValidateNested = cv('decorator/common/ValidateNested').ValidateNested as typeof CV.ValidateNested;
export type { ValidationArguments, ValidationOptions, ValidatorOptions, ValidationError } from 'class-validator';

const { Validator } = cv('validation/Validator') as { Validator: new () => CV.Validator };
const { getFromContainer } = cv('container') as { getFromContainer: <T>(c: new () => T) => T };

/** class-validator's `validate(object, options)` (the index's function, minus the schema form the relay never uses). */
export const validate = (object: object, options?: CV.ValidatorOptions): Promise<CV.ValidationError[]> =>
  getFromContainer(Validator).validate(object, options);

/** The same, synchronously: socket frames are handled in the order they came (parse-frame.ts). */
export const validateSync = (object: object, options?: CV.ValidatorOptions): CV.ValidationError[] =>
  getFromContainer(Validator).validateSync(object, options);

export const getMetadataStorage = cv('metadata/MetadataStorage').getMetadataStorage as typeof CV.getMetadataStorage;

/** What Nest's ValidationPipe calls on its validator package. */
export const validatorPackage = { validate, getMetadataStorage };
