/** `svc phone-sim`'s usage: one text for `svc help phone-sim`, `--help` and a wrong command line. */
export const PHONE_SIM_USAGE = `Usage: svc phone-sim --relay ws://127.0.0.1:8767 (--code ABC123 | --token TOKEN) [options]

A simulated phone: pairs (or reconnects), reports bridge.status, answers every Device Control
route with plausible data, and plays the app's other flows, so each console page comes alive
without a phone (docs/OPERATING.md, "Every page without a phone").

Phone:
  --mode legacy|app       app: behaves like the real Android app (docs/COMPATIBILITY.md): nested
                          status every 30 s, its own confirmation modal, blocklist and idle expiry,
                          uploaded screenshots; answers bridge.command only
  --confirm allow|deny|ignore
                          the user's answer to destructive-verb confirmations (default allow)
  --name NAME, --device-id ID, --master on|off, --no-device-control, --current-app PACKAGE
  --trust send,pay        verbs confirmed without asking
  --auto-disable MINUTES  idle minutes before timed screen access ends (app: 5-120, default 30)
  --screen WxH            the screen in pixels, screenshots full size at it (default: 54x96 thumbnails)
  --ui fixed|apps         apps: a launcher, a messaging app and settings that taps and typing change
                          (default fixed: one Messages screen that nothing changes)
  --save-token FILE       write the session token there (0600); it is never printed
  --quiet                 do not log Device Control traffic

Flows: each runs once, in this order, then the simulator exits (0, or 1 if one failed);
--stay, --threads or --interactive keep it online.
  --notify "TITLE|TEXT"   post a notification from the phone (repeatable)
  --notify-app PACKAGE    the app it comes from (default com.google.android.apps.messaging)
  --clip TEXT             copy TEXT on the phone (the host reads it with GET /clipboard)
  --threads               subscribe to Threads; print messages as they arrive (stays online)
  --reply TEXT            answer the newest Threads message (subscribes first)
  --chat ID, --reply-to MESSAGE_ID
                          answer that conversation (and message) instead
  --reply-to-handover TEXT
                          answer every hand-over (android_hand_over) with TEXT ("done", "no", or
                          other words) from the notification's reply box; stays online
  --say TEXT              have the relay speak TEXT (/voice/synthesize)
  --audio-out FILE        keep what it spoke (mp3)
  --hear FILE             have the relay transcribe an audio file (/voice/transcribe)
  --call TEXT             a voice-mode call as the app places one: a realtime-agent session, TEXT
                          spoken by espeak-ng streamed as the mic (16 kHz PCM), what the relay heard,
                          the agent's reply and its audio printed, then it hangs up (Voice page)
  --call-wav FILE         the same call with a 16-bit PCM WAV file as the mic
  --profiles              list the profile catalog auth.ok offered
  --profile NAME          open NAME in the profile inspector: config, SOUL, skills, memory
  --soul TEXT             with --profile: save TEXT as its SOUL.md (the inspector's Save; needs the
                          chat grant; the Profiles page's writes)
  --shell COMMAND         open a terminal tab, type COMMAND (repeatable, in order), then exit
  --interactive, -i       a prompt on stdin, one command a line (type help): notify, threads,
                          reply, shell, clip, say, hear, call, call-wav, profiles, profile,
                          soul, master, status, quit

Exit status: 0 ok (or the relay closed normally), 1 a flow failed or the connection was lost,
2 usage error.`;
