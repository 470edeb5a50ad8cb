import { espeakVoiceFor, parseEspeakVoices } from './espeak-languages';
import { languageTag, tagFallbacks } from './speech-language';

/** The head and a few lines of `espeak-ng --voices` (espeak-ng 1.51, Debian). */
const VOICES = `Pty Language       Age/Gender VoiceName          File                 Other Languages
 5  de              --/M      German             gmw/de
 2  en-gb           --/M      English_(Great_Britain) gmw/en               (en 2)
 5  en-gb-x-rp      --/M      English_(Received_Pronunciation) gmw/en-GB-x-rp       (en-gb 4)(en 5)
 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)
 5  cmn             --/M      Chinese_(Mandarin,_latin_as_English) sit/cmn              (zh-cmn 5)(zh 5)
 5  pt-br           --/M      Portuguese_(Brazil) roa/pt-BR            (pt 6)
 x  --bad           --/M      not a voice line
`;

describe('espeak-ng languages', () => {
  it('reads each voice’s language and the other languages it answers for, lower-cased; nothing else', () => {
    expect([...parseEspeakVoices(VOICES)].sort()).toEqual(['cmn', 'de', 'en', 'en-gb', 'en-gb-x-rp', 'en-us', 'pt', 'pt-br', 'zh', 'zh-cmn']);
  });

  it('a tag as the app sends it: case and `_` do not matter, a name is no tag; its fallbacks end at the language', () => {
    expect(languageTag(' de-DE ')).toBe('de-de');
    expect(languageTag('pt_BR')).toBe('pt-br');
    for (const bad of ['German', 'de;rm', '../etc', '-v', 'd']) expect(languageTag(bad)).toBeNull();
    expect(tagFallbacks('de-de-1996')).toEqual(['de-de-1996', 'de-de', 'de']);
  });

  it('a voice that speaks the language is kept; otherwise the language with the voice’s variant', () => {
    expect(espeakVoiceFor('en-us', null)).toBe('en-us');
    expect(espeakVoiceFor('en-gb', 'en')).toBe('en-gb');
    expect(espeakVoiceFor('en-us', 'en-us')).toBe('en-us');
    expect(espeakVoiceFor('en-us', 'de')).toBe('de');
    expect(espeakVoiceFor('en-us+f3', 'de')).toBe('de+f3');
    expect(espeakVoiceFor('en-us', 'en-gb')).toBe('en-gb');
  });
});
