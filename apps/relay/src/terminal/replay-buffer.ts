/**
 * The last `capacity` bytes of a shell's output, as whole UTF-8 characters, so a re-attaching phone
 * can repaint. Chunks are kept as they came; only the oldest one is ever cut, on a character boundary.
 */
export class ReplayBuffer {
  private chunks: Array<{ text: string; bytes: number }> = [];
  private size = 0;

  constructor(readonly capacity = 64 * 1024) {}

  get bytes(): number {
    return this.size;
  }

  push(text: string, bytes = Buffer.byteLength(text)): void {
    if (text.length === 0) return;
    this.chunks.push({ text, bytes });
    this.size += bytes;
    while (this.size > this.capacity) {
      const first = this.chunks[0];
      const excess = this.size - this.capacity;
      if (first.bytes <= excess) {
        this.chunks.shift();
        this.size -= first.bytes;
        continue;
      }
      const buf = Buffer.from(first.text, 'utf8');
      let cut = excess;
      while (cut < buf.length && (buf[cut] & 0xc0) === 0x80) cut++; // never start inside a character
      const kept = buf.subarray(cut);
      this.chunks[0] = { text: kept.toString('utf8'), bytes: kept.length };
      this.size -= cut;
    }
  }

  text(): string {
    return this.chunks.map((c) => c.text).join('');
  }

  clear(): void {
    this.chunks = [];
    this.size = 0;
  }
}
