/**
 * DynamoDB numbers (`N`) are decimal strings with up to 38 significant digits and a magnitude between 1E-130
 * and 1E126 (exclusive). JavaScript doubles lose precision well inside that range (epoch-ms values already
 * sit at 13 digits), so the model compares and adds them as exact decimals: a BigInt mantissa and a power
 * of ten.
 */
import { validationError } from './errors.ts';

export interface Decimal {
  /** Signed; no trailing zeros (a zero is 0n with exponent 0). */
  readonly mantissa: bigint;
  readonly exponent: number;
}

const MAX_SIGNIFICANT_DIGITS = 38;
const MAX_ADJUSTED_EXPONENT = 125;
const MIN_ADJUSTED_EXPONENT = -130;
const NUMBER_PATTERN = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Parses and range-checks an `N` string as DynamoDB does on input; throws a ValidationException if invalid. */
export function parseDecimal(text: string): Decimal {
  const match = NUMBER_PATTERN.exec(text);
  const integerDigits = match?.[2] ?? '';
  const fractionDigits = match?.[3] ?? '';
  if (match === null || integerDigits.length + fractionDigits.length === 0) {
    throw validationError('A value provided cannot be converted into a number');
  }
  const negative = match[1] === '-';
  const exponent = Number(match[4] ?? '0') - fractionDigits.length;
  const magnitude = BigInt(integerDigits + fractionDigits);
  return checkedDecimal(normalize(negative ? -magnitude : magnitude, exponent));
}

export function isValidDecimal(text: string): boolean {
  try {
    parseDecimal(text);
    return true;
  } catch {
    return false;
  }
}

/** The canonical text DynamoDB returns: plain notation, no leading or trailing zeros. */
export function formatDecimal(value: Decimal): string {
  const negative = value.mantissa < 0n;
  const digits = (negative ? -value.mantissa : value.mantissa).toString();
  let text: string;
  if (value.exponent >= 0) {
    text = value.mantissa === 0n ? '0' : digits + '0'.repeat(value.exponent);
  } else {
    const padded = digits.padStart(-value.exponent + 1, '0');
    const point = padded.length + value.exponent;
    text = `${padded.slice(0, point)}.${padded.slice(point)}`;
  }
  return negative ? `-${text}` : text;
}

/** Already canonical: an integer without leading zeros, not -0, within 38 digits. */
const CANONICAL_INTEGER = /^(0|-?[1-9]\d{0,37})$/;

export function canonicalNumber(text: string): string {
  if (CANONICAL_INTEGER.test(text)) return text;
  return formatDecimal(parseDecimal(text));
}

export function compareDecimals(left: Decimal, right: Decimal): number {
  const exponent = Math.min(left.exponent, right.exponent);
  const a = left.mantissa * 10n ** BigInt(left.exponent - exponent);
  const b = right.mantissa * 10n ** BigInt(right.exponent - exponent);
  return a < b ? -1 : a > b ? 1 : 0;
}

export function addDecimals(left: Decimal, right: Decimal): Decimal {
  const exponent = Math.min(left.exponent, right.exponent);
  const sum =
    left.mantissa * 10n ** BigInt(left.exponent - exponent) +
    right.mantissa * 10n ** BigInt(right.exponent - exponent);
  return checkedDecimal(normalize(sum, exponent));
}

export function negateDecimal(value: Decimal): Decimal {
  return { mantissa: -value.mantissa, exponent: value.exponent };
}

function normalize(mantissa: bigint, exponent: number): Decimal {
  if (mantissa === 0n) return { mantissa: 0n, exponent: 0 };
  let m = mantissa;
  let e = exponent;
  while (m % 10n === 0n) {
    m /= 10n;
    e += 1;
  }
  return { mantissa: m, exponent: e };
}

function checkedDecimal(value: Decimal): Decimal {
  if (value.mantissa === 0n) return value;
  const digits = (value.mantissa < 0n ? -value.mantissa : value.mantissa).toString().length;
  if (digits > MAX_SIGNIFICANT_DIGITS) {
    throw validationError('Attempting to store more than 38 significant digits in a Number');
  }
  const adjusted = value.exponent + digits - 1;
  if (adjusted > MAX_ADJUSTED_EXPONENT) {
    throw validationError(
      'Number overflow. Attempting to store a number with magnitude larger than supported range',
    );
  }
  if (adjusted < MIN_ADJUSTED_EXPONENT) {
    throw validationError(
      'Number underflow. Attempting to store a number with magnitude smaller than supported range',
    );
  }
  return value;
}
