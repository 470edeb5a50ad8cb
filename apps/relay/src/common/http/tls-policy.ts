import type { SecureContextOptions } from 'node:tls';

/**
 * What every TLS listener of the project negotiates: Secure Link (its own origin and the Reach streams
 * handed to it), the relay's RELAY_SSL_CERT listener and the Reach broker. TLS 1.2 only with ECDHE (forward
 * secrecy) and an AEAD cipher; Node's default list also takes CBC suites with SHA-1 or SHA-2 MACs and
 * static-RSA key exchange. TLS 1.3 is left as OpenSSL has it (its suites are all AEAD): the list names no
 * TLS 1.3 suite, so Node keeps the default ones. No server preference: a phone without AES instructions
 * picks ChaCha20.
 * Every client offers these: the app through OkHttp's default spec (MODERN_TLS, whose first TLS 1.2 suites
 * are exactly these), the desktop CLI on Node or Bun, Python's ssl in the host tools.
 */
export const TLS_LISTENER_OPTIONS = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
} as const satisfies SecureContextOptions;
