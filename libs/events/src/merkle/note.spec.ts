import { generateKeyPairSync } from 'node:crypto';
import {
  checkNote,
  checkpointText,
  cosignatureLine,
  NoteFormatError,
  parseCheckpointText,
  parseNote,
  parseVkey,
  SIG_COSIGNATURE_V1,
  SIG_ED25519,
  signNote,
  vkeyText,
} from './note';

// The example of golang.org/x/mod/sumdb/note's documentation (the signed-note reference implementation):
// a vkey and a note it signed. Nothing here made them, so they check the key hash and the signed bytes.
const GO_VKEY = 'example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k';
const GO_NOTE =
  'This is an example message.\n\n\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';

const keys = () => generateKeyPairSync('ed25519');

describe('signed-note (c2sp.org/signed-note) and checkpoints (c2sp.org/tlog-checkpoint)', () => {
  it("reads Go's example vkey (its key hash) and verifies its note", () => {
    const v = parseVkey(GO_VKEY);
    expect(v.name).toBe('example.com/foo');
    expect(v.type).toBe(SIG_ED25519);
    expect(checkNote(parseNote(GO_NOTE), [v])).toEqual([{ name: 'example.com/foo', type: 1, keyHash: '530d903a' }]);
    expect(() => checkNote(parseNote(GO_NOTE.replace('example message', 'exemplary message')), [v])).toThrow(/bad signature/);
    // A vkey whose hash does not match its name and key is refused.
    expect(() => parseVkey(GO_VKEY.replace('530d903a', '530d903b'))).toThrow(NoteFormatError);
    expect(() => parseVkey(GO_VKEY.replace('example.com/foo', 'example.com/bar'))).toThrow(/does not match/);
  });

  it('signs a checkpoint our vkey verifies; unknown signers are ignored, a bad known signature refuses the note', () => {
    const log = keys();
    const other = keys();
    const root = Buffer.alloc(32, 7);
    const text = checkpointText('svc-relay/abc', 42, root);
    const note = signNote(text, 'svc-relay/abc', log.privateKey, log.publicKey);
    expect(note.startsWith('svc-relay/abc\n42\n' + root.toString('base64') + '\n\n\u2014 svc-relay/abc ')).toBe(true);
    const vkey = parseVkey(vkeyText('svc-relay/abc', SIG_ED25519, log.publicKey));
    // A second signature by a key the reader does not know, before ours: ignored.
    const stranger = signNote(text, 'someone.else', other.privateKey, other.publicKey).slice(text.length + 1);
    const two = text + '\n' + stranger + note.slice(text.length + 1);
    const parsed = parseNote(two);
    expect(parsed.signatures.map((s) => s.name)).toEqual(['someone.else', 'svc-relay/abc']);
    expect(checkNote(parsed, [vkey]).map((s) => s.name)).toEqual(['svc-relay/abc']);
    expect(checkNote(parseNote(text + '\n' + stranger), [vkey])).toEqual([]);
    // The same name with another key's signature under our key hash: a known signer that did not sign.
    const forged = note.replace(/ [A-Za-z0-9+/=]+\n$/, ' ' + Buffer.concat([vkey.keyHash, Buffer.alloc(64, 1)]).toString('base64') + '\n');
    expect(() => checkNote(parseNote(forged), [vkey])).toThrow(/bad signature/);
    expect(parseCheckpointText(parsed.text)).toEqual({ origin: 'svc-relay/abc', size: 42, root, extensions: [] });
  });

  it('cosignature/v1: key hash with type 0x04, timestamp, and the message over the whole checkpoint text', () => {
    const log = keys();
    const w = keys();
    const text = checkpointText('svc-relay/abc', 9, Buffer.alloc(32, 1));
    const line = cosignatureLine(text, 'witness.example/w1', 1_700_000_000, w.privateKey, w.publicKey);
    const note = signNote(text, 'svc-relay/abc', log.privateKey, log.publicKey) + line;
    const wv = parseVkey(vkeyText('witness.example/w1', SIG_COSIGNATURE_V1, w.publicKey));
    const lv = parseVkey(vkeyText('svc-relay/abc', SIG_ED25519, log.publicKey));
    const signed = checkNote(parseNote(note), [lv, wv]);
    expect(signed.map((s) => [s.name, s.type, s.time])).toEqual([
      ['svc-relay/abc', 1, undefined],
      ['witness.example/w1', 4, 1_700_000_000],
    ]);
    const raw = Buffer.from(line.trim().split(' ')[2], 'base64');
    expect(raw.length).toBe(4 + 8 + 64);
    expect(raw.readBigUInt64BE(4)).toBe(1_700_000_000n);
    // The same key as a plain Ed25519 (type 0x01) verifier has another key hash: the line is not its.
    expect(checkNote(parseNote(note), [parseVkey(vkeyText('witness.example/w1', SIG_ED25519, w.publicKey))])).toEqual([]);
  });

  it('refuses malformed notes and checkpoints', () => {
    expect(() => parseNote('no blank line\n\u2014 a AAAA\n')).toThrow(NoteFormatError);
    expect(() => parseNote('text\n\n-- a AAAAAAAAAA==\n')).toThrow(/em dash/);
    expect(() => parseNote('text\n\n\u2014 a AAAAAAAAAA==')).toThrow(/newline/);
    expect(() => parseNote('x'.repeat(20_000) + '\n\n\u2014 a AAAAAAAAAA==\n')).toThrow(/at most/);
    expect(() => parseCheckpointText('o\n012\n' + Buffer.alloc(32).toString('base64') + '\n')).toThrow(/leading zeros/);
    expect(() => parseCheckpointText('o\n12\nAAAA\n')).toThrow(/32 bytes/);
    expect(() => parseCheckpointText('o\n12\n')).toThrow(NoteFormatError);
  });
});
