import { errorBodyText, errorFieldText } from './upstream-error';

describe('an upstream error as one sentence, never its JSON', () => {
  it('reads OpenAI-style error objects and strings, FastAPI detail, message; text stays text', () => {
    expect(errorBodyText('{"error":{"message":"model overloaded","type":"server_error"}}')).toBe('model overloaded');
    expect(errorBodyText('{"error":"rate limited"}')).toBe('rate limited');
    expect(errorBodyText('{"detail":"Not authenticated"}')).toBe('Not authenticated');
    expect(errorBodyText('{"message":"bad gateway"}')).toBe('bad gateway');
    expect(errorBodyText('{"status":500}')).toBe('an error without a message');
    expect(errorBodyText('Bad Gateway\n  upstream down')).toBe('Bad Gateway upstream down');
    expect(errorFieldText({ code: 5 })).toBe('error');
  });
});
