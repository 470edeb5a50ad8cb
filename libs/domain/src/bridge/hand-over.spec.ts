import { HAND_OVER_NOTE_MAX, handOverThreadText, readHandOverReply } from './hand-over';

/*
 * A Thread hand-over's reply read as the user's answer (the relay's matching of replies to the question is
 * driven over real sockets in test/e2e/mcp-hand-over-thread.e2e-spec.ts).
 */
describe('readHandOverReply', () => {
  it.each(['done', 'Done!', ' OK ', 'okay.', 'yes', 'FINISHED', 'done?!'])('"%s" is done, with no note', (t) => {
    expect(readHandOverReply(t)).toEqual({ answer: 'done' });
  });

  it.each(['no', 'No.', 'deny', 'STOP', ' stop! '])('"%s" declines', (t) => {
    expect(readHandOverReply(t)).toEqual({ answer: 'declined' });
  });

  it('other words are done with the words as the note; "no" inside a sentence is not a refusal', () => {
    expect(readHandOverReply('no luck, the code expired')).toEqual({ answer: 'done', note: 'no luck, the code expired' });
    expect(readHandOverReply('done, but the app crashed')).toEqual({ answer: 'done', note: 'done, but the app crashed' });
  });

  it('control characters become spaces, the note is bounded, and a huge reply is read in linear time', () => {
    expect(readHandOverReply('a\u0000b\u001bc\u0085d\u2028e').note).toBe('a b c d e');
    const huge = readHandOverReply(`${'x'.repeat(1_000_000)}`);
    expect(huge.note!.length).toBe(HAND_OVER_NOTE_MAX);
    const spaced = readHandOverReply(`${' '.repeat(100_000)}!`);
    expect(spaced.answer).toBe('done');
  });

  it('the question the app shows', () => {
    expect(handOverThreadText('log in')).toBe('The agent asks you to take over: log in. Reply "done" when you have finished, or "no" to refuse.');
  });
});
