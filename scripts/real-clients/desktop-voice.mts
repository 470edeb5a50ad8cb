// The reference desktop CLI's voice server (desktop/src/voiceServer.ts, unmodified) against a running relay:
// its /synthesize proxies to the relay's /voice/synthesize, its /turn sends a browser-style audio/webm
// recording to /voice/transcribe (a stand-in gateway answers the agent turn).
//   node --experimental-websocket --import tsx desktop-voice.mts <ref checkout> <relay ws url> <session token>
import { EventEmitter } from 'node:events';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const [ref, relayUrl, token] = process.argv.slice(2);
const { startVoiceServer } = await import(pathToFileURL(path.join(ref, 'desktop/src/voiceServer.ts')).href);
class Gateway extends EventEmitter {
  async request(method: string, params: { text?: string }) {
    if (method === 'prompt.submit')
      setTimeout(() => this.emit('event', { type: 'message.complete', payload: { text: `You said: ${params.text}` } }), 20);
    return {};
  }
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'desktop-voice-'));
execFileSync('sh', [
  '-c',
  `espeak-ng -v en-us --stdout "hello world" > ${dir}/a.wav && ffmpeg -y -nostdin -loglevel error -i ${dir}/a.wav -c:a libopus ${dir}/a.webm`,
]);
const server = await startVoiceServer({ token, relayUrl, gateway: new Gateway(), sessionId: 's1' });
const tts = await fetch(server.url + 'synthesize', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ text: 'You said hello world' }),
});
const mp3 = Buffer.from(await tts.arrayBuffer());
console.log(JSON.stringify({ flow: 'synthesize', status: tts.status, type: tts.headers.get('content-type'), bytes: mp3.length }));
const turn = await fetch(server.url + 'turn', {
  method: 'POST',
  headers: { 'content-type': 'audio/webm;codecs=opus' },
  body: fs.readFileSync(`${dir}/a.webm`),
});
console.log(
  JSON.stringify({
    flow: 'turn',
    status: turn.status,
    events: (await turn.text())
      .split('\n')
      .filter((l) => l.startsWith('event: '))
      .map((l) => l.slice(7)),
  }),
);
await server.close();
fs.rmSync(dir, { recursive: true, force: true });
