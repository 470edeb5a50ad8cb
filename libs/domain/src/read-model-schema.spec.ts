import { FIRST_PRUNABLE_SCHEMA, missingSnapshotUpcasters, READ_MODEL_SCHEMA, upcastSnapshotState } from './read-model-schema';
import { ReadModels } from './read-models';

describe('read-model schema upgrades', () => {
  it('every schema since the first that could be pruned has an upcaster to the next (a pruned log needs its snapshot carried)', () => {
    expect(missingSnapshotUpcasters()).toEqual([]);
  });

  it('a bump without its upcaster is found (the check above can fail)', () => {
    expect(missingSnapshotUpcasters(FIRST_PRUNABLE_SCHEMA + 2, { [FIRST_PRUNABLE_SCHEMA]: (s) => s })).toEqual([FIRST_PRUNABLE_SCHEMA + 1]);
  });

  it("today's snapshot restores as it is", () => {
    const state = new ReadModels().snapshot();
    const up = upcastSnapshotState(state);
    expect(up).toEqual({ state });
  });

  it('an older snapshot is carried up step by step and restores', () => {
    const old = { ...new ReadModels().snapshot(), schema: READ_MODEL_SCHEMA, legacy: 1 };
    const up = upcastSnapshotState(old, READ_MODEL_SCHEMA + 2, {
      [READ_MODEL_SCHEMA]: ({ legacy, ...rest }) => ({ ...rest, renamed: legacy }),
      [READ_MODEL_SCHEMA + 1]: (s) => ({ ...s, added: [] }),
    });
    expect('state' in up && up.upcastFrom).toBe(READ_MODEL_SCHEMA);
    if (!('state' in up)) throw new Error('not upcast');
    expect(up.state).toMatchObject({ schema: READ_MODEL_SCHEMA + 2, renamed: 1, added: [] });
    expect(up.state).not.toHaveProperty('legacy');
  });

  it('a snapshot of a newer relay, or of a schema with no upcaster, is refused with the reason', () => {
    expect(upcastSnapshotState({ schema: READ_MODEL_SCHEMA + 1 })).toEqual({
      reason: `read-model schema ${READ_MODEL_SCHEMA + 1} is newer than this relay's ${READ_MODEL_SCHEMA}`,
    });
    expect(upcastSnapshotState({ schema: 2 })).toEqual({
      reason: `read-model schema 2, this relay uses ${READ_MODEL_SCHEMA} and has no upcaster from 2`,
    });
  });
});
