// The email patterns refuse a hostile value in linear time (issue #42 §5): `x@` and many dots then a
// space took the former pattern about 0.8 s at 20,000 dots, growing with the square of the length.
// The sandbox caps the length at 254 inside the pattern; the API schema caps it before its pattern.
import { email } from '../../src/api/schemas/common';
import { EMAIL, EMAIL_MAX_LENGTH } from '../../src/sandbox/validation';

const MiB = 1024 * 1024;
const hostile = [
  `x@${'.'.repeat(MiB)} `,
  `x@${'a'.repeat(MiB)} `,
  `x@a${'.a'.repeat(MiB / 2)} `,
  `${'a'.repeat(MiB)}@ `,
  `x@${'a.'.repeat(MiB / 2)}@`,
];

/** The quantified groups of a pattern's source: `(...)` followed by +, *, ? or {. None may hold a quantifier. */
function nestedQuantifiers(source: string): string[] {
  return [...source.matchAll(/\((?:[^()\\]|\\.)*\)[+*?{]/g)]
    .map((m) => m[0])
    .filter((g) => /[+*{]/.test(g.slice(0, -1)));
}

function timed(fn: () => void): number {
  const started = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

describe('the sandbox email pattern', () => {
  it('has no quantified group, let alone a nested quantifier', () => {
    expect(nestedQuantifiers(EMAIL.source)).toEqual([]);
    expect(EMAIL.source).not.toMatch(/\)[+*?{]/);
  });

  it('accepts addresses up to 254 characters and refuses longer ones', () => {
    const at254 = `${'a'.repeat(EMAIL_MAX_LENGTH - '@example.com'.length)}@example.com`;
    expect(at254).toHaveLength(254);
    expect(EMAIL.test(at254)).toBe(true);
    expect(EMAIL.test(`a${at254}`)).toBe(false);
    for (const ok of ['ada@example.com', 'a.b+c@mail.example.co.uk', 'x@y.z']) expect(EMAIL.test(ok)).toBe(true);
    for (const bad of ['ada', 'ada@', '@example.com', 'ada@example', 'a da@example.com', 'a@.example.com', 'a@b@c.d'])
      expect(EMAIL.test(bad)).toBe(false);
  });

  it.each(hostile.map((h) => [`${h.slice(0, 12)}… (${h.length} characters)`, h]))(
    'refuses %s in well under a second',
    (_label, value) => {
      let result = true;
      expect(timed(() => (result = EMAIL.test(value)))).toBeLessThan(1_000);
      expect(result).toBe(false);
    },
  );
});

describe('the API schema email', () => {
  it('accepts up to 254 characters, naming the rule past them', () => {
    expect(email.safeParse('ada@example.com').success).toBe(true);
    const long = `${'a'.repeat(250)}@example.com`;
    expect(email.safeParse(long).error?.issues[0]?.message).toBe('must be at most 254 characters');
  });

  it.each(hostile.map((h) => [`${h.slice(0, 12)}… (${h.length} characters)`, h]))(
    'refuses %s in well under a second',
    (_label, value) => {
      let success = true;
      expect(timed(() => (success = email.safeParse(value).success))).toBeLessThan(1_000);
      expect(success).toBe(false);
    },
  );

  it('keeps its pattern free of nested quantifiers, and linear without the cap', () => {
    const pattern = email.def.checks?.map(
      (c) => (c as unknown as { _zod: { def: { pattern?: RegExp } } })._zod.def.pattern,
    );
    const sources = (pattern ?? []).filter((p): p is RegExp => p instanceof RegExp).map((p) => p.source);
    expect(sources).toHaveLength(1);
    expect(nestedQuantifiers(sources[0]!)).toEqual([]);
    // Linear by itself, not only behind the length cap.
    const pattern254 = new RegExp(sources[0]!);
    for (const value of hostile) expect(timed(() => expect(pattern254.test(value)).toBe(false))).toBeLessThan(1_000);
  });
});
