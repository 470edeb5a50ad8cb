import { runTool } from './run-tool';
import { languageTag, tagFallbacks, type SpeechLanguage } from './speech-language';

/** What `espeak-ng --voices` may print (about 10 KiB for its ~130 voices) and how many names are kept. */
const MAX_OUTPUT = 256 * 1024;
const MAX_NAMES = 2000;
/** A language name as espeak-ng lists it: never a path or an option. */
const NAME_RE = /^[a-z]{2,3}(?:-[a-z0-9]{1,8}){0,5}$/;

/**
 * The languages of `espeak-ng --voices`: each voice's language (`de`, `en-gb-x-rp`) and the other languages it
 * answers for (`(en 2)`, `(zh 5)`), lower-cased. Lines that do not read so are skipped.
 */
export function parseEspeakVoices(out: string): Set<string> {
  const names = new Set<string>();
  for (const line of out.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 2 || !/^\d+$/.test(cols[0])) continue;
    const more = [...line.matchAll(/\(([A-Za-z0-9-]{2,40}) \d+\)/g)].map((m) => m[1]);
    for (const n of [cols[1], ...more]) {
      const name = n.toLowerCase();
      if (NAME_RE.test(name) && names.size < MAX_NAMES) names.add(name);
    }
  }
  return names;
}

/**
 * The languages the installed espeak-ng speaks, asked of it once (`espeak-ng --voices`, bounded in time and
 * output) and kept for the process: voices change only with a package upgrade, which a restart follows.
 * A failed listing is not kept, so the next question asks again.
 */
export class EspeakLanguages {
  private listing: Promise<ReadonlySet<string>> | null = null;

  constructor(
    private readonly bin: () => string | null,
    /** RELAY_VOICE_TIMEOUT_SECONDS, as every provider program. */
    private readonly timeoutMs: number,
  ) {}

  names(): Promise<ReadonlySet<string>> {
    if (this.listing) return this.listing;
    const bin = this.bin();
    if (!bin) return Promise.resolve(new Set());
    const listing = runTool(bin, ['--voices'], { timeoutMs: this.timeoutMs, maxStdout: MAX_OUTPUT }).then((r) =>
      parseEspeakVoices(r.stdout.toString('utf8')),
    );
    this.listing = listing;
    listing.catch(() => {
      if (this.listing === listing) this.listing = null;
    });
    return listing;
  }

  /** espeak-ng's name for the language the app sent (`de-DE` is `de`, `pt_BR` is `pt-br`), or why there is none. */
  async resolve(raw: string): Promise<SpeechLanguage> {
    const tag = languageTag(raw);
    const names = await this.names().catch(() => new Set<string>());
    const found = tag === null ? undefined : tagFallbacks(tag).find((t) => names.has(t));
    if (found) return { ok: true, language: found };
    const some = ['en', 'de', 'fr', 'es', 'pt-br', 'zh'].filter((n) => names.has(n)).join(', ');
    return {
      ok: false,
      why: `the offline provider (espeak-ng) has no voice for the language "${raw.trim().slice(0, 40)}"; it speaks ${names.size} languages${some ? ` (${some}, ...)` : ''}, listed by GET /voice/output/providers/offline/options`,
    };
  }
}

/**
 * The espeak-ng voice for `voice` speaking `language` (espeak-ng's name for it): a voice that already speaks it
 * is kept (`en-gb` for `en`), otherwise the language with the voice's variant (`en-us+f3` in `de` is `de+f3`).
 */
export function espeakVoiceFor(voice: string, language: string | null): string {
  if (language === null) return voice;
  const [lang, variant] = voice.toLowerCase().split('+', 2);
  if (lang === language || lang.startsWith(`${language}-`)) return voice;
  return variant ? `${language}+${variant}` : language;
}
