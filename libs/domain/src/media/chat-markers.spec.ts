import { clientNames } from '../spelling';
import { findPathMarkers, replacePathMarkers, tokenMarker } from './chat-markers';

const SVC = clientNames('svc');
const HERMES = clientNames('hermes');

describe('chat media markers', () => {
  it('finds bare path markers and trims sentence punctuation', () => {
    const text = 'See MEDIA:/tmp/a.png. Then MEDIA:/tmp/b c, and (MEDIA:/tmp/c.jpg)!';
    expect(findPathMarkers(text).map((m) => m.path)).toEqual(['/tmp/a.png', '/tmp/b', '/tmp/c.jpg']);
  });

  it('takes quoted paths with spaces', () => {
    const [m] = findPathMarkers('MEDIA:"/Users/ada/Screen Shot 1.png" done');
    expect(m).toEqual({ start: 0, end: 36, path: '/Users/ada/Screen Shot 1.png' });
  });

  it('ignores token markers, relative paths and words that merely end in MEDIA', () => {
    expect(findPathMarkers('MEDIA:svc-relay://abc MEDIA:relative.png SOCIALMEDIA:/tmp/x MEDIA:/')).toEqual([]);
  });

  it('replaces only markers that got a token, keeping everything else byte for byte', () => {
    const text = 'a MEDIA:/tmp/x.png b MEDIA:/etc/passwd c MEDIA:/tmp/x.png.';
    const markers = findPathMarkers(text);
    const out = replacePathMarkers(text, markers, new Map([['/tmp/x.png', 'TOKEN']]), SVC);
    expect(out).toBe(`a ${tokenMarker('TOKEN', SVC)} b MEDIA:/etc/passwd c ${tokenMarker('TOKEN', SVC)}.`);
  });

  it("writes the spec's spelling by default and the public clients' under RELAY_CLIENT_SPELLING=hermes", () => {
    expect(tokenMarker('T', SVC)).toBe('MEDIA:svc-relay://T');
    expect(tokenMarker('T', HERMES)).toBe('MEDIA:hermes-relay://T');
  });
});
