/** Text under an option's description column (24 spaces in), wrapped at 100 characters on spaces. */
export function optionText(text: string): string {
  const indent = ' '.repeat(24);
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent.length + line.length + 1 + word.length > 100) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, indent + line].join('\n');
}
