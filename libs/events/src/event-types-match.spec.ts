import { matchesType, parseTypeSpecs, typeMatcher, typeSpecsSql } from './event-types-match';

describe('event type specs: one rule for the console, the CLI and its SQL', () => {
  const types = ['session.created', 'session.revoked', 'sessions.x', 'pairing.code_registered', 'phone.connected', 'phone.connected_x'];
  const hits = (spec: string | string[]) => types.filter(typeMatcher(spec));

  it('`x`, `x.` and `x.*` name the family; `*` every type; anything else one type exactly', () => {
    for (const spec of ['session', 'session.', 'session.*']) expect(hits(spec)).toEqual(['session.created', 'session.revoked']);
    expect(hits('*')).toEqual(types);
    expect(hits('session.revoked')).toEqual(['session.revoked']);
    expect(hits('session.rev')).toEqual([]);
    // A bare type stays exact: no event type extends another by a dot.
    expect(hits('phone.connected')).toEqual(['phone.connected']);
  });

  it('comma lists, repeated flags, blanks; nothing or `*` anywhere means every type', () => {
    expect(hits(['session.revoked, pairing.', ' phone.connected '])).toEqual(['session.revoked', 'pairing.code_registered', 'phone.connected']);
    expect(parseTypeSpecs(' , ')).toBeUndefined();
    expect(parseTypeSpecs([])).toBeUndefined();
    expect(parseTypeSpecs(undefined)).toBeUndefined();
    expect(parseTypeSpecs('session.,*')).toBeUndefined();
    expect(parseTypeSpecs(['session.*', 'phone'])).toEqual(['session.', 'phone']);
    expect(matchesType('anything', undefined)).toBe(true);
  });

  it('the SQL pair: the specs as they are for `=`, family patterns for LIKE with \\ % _ escaped', () => {
    expect(typeSpecsSql(parseTypeSpecs('*'))).toBeNull();
    expect(typeSpecsSql(parseTypeSpecs('session,pairing.,phone.connected,a_b%\\'))).toEqual({
      exact: ['session', 'pairing.', 'phone.connected', 'a_b%\\'],
      like: ['session.%', 'pairing.%', 'phone.connected.%', 'a\\_b\\%\\\\.%'],
    });
  });

  it('the SQL pair selects what matchesType selects (LIKE evaluated here by its definition)', () => {
    const like = (value: string, pattern: string) => {
      let re = '';
      for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i];
        if (c === '\\') re += pattern[++i].replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        else if (c === '%') re += '.*';
        else if (c === '_') re += '.';
        else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      }
      return new RegExp(`^${re}$`, 's').test(value);
    };
    const all = [...types, 'a_b%\\.x', 'aXb%\\.x', 'session'];
    for (const spec of ['session', 'session.', 'phone.connected', 'a_b%\\', 'pairing.code_registered,phone.']) {
      const parsed = parseTypeSpecs(spec);
      const sql = typeSpecsSql(parsed)!;
      const bySql = all.filter((t) => sql.exact.includes(t) || sql.like.some((p) => like(t, p)));
      expect([spec, bySql]).toEqual([spec, all.filter((t) => matchesType(t, parsed))]);
    }
  });
});
