import { epoch } from './epoch';

describe('epoch', () => {
  it('turns milliseconds, Dates and ISO strings into whole seconds, and keeps null', () => {
    expect(epoch(1_772_366_400_999)).toBe(1_772_366_400);
    expect(epoch(new Date('2026-03-01T12:00:00.500Z'))).toBe(1_772_366_400);
    expect(epoch('2026-03-01T12:00:00.000Z')).toBe(1_772_366_400);
    expect(epoch(null)).toBeNull();
  });
});
