/** One named secret as the console and `svc relay secrets` list it: never its value. Times in epoch seconds. */
export type SecretRow = { name: string; created: number; updated: number; last_used: number | null };

/** `GET /console/api/secrets`. */
export type SecretsView = { ok: true; max: number; secrets: SecretRow[] };

/** `POST /console/api/secrets` `{name, value}`. */
export type SetSecretAnswer = { ok: true; name: string; replaced: boolean; seq: number };

/** `POST /console/api/secrets/forget` `{name}`. */
export type ForgetSecretAnswer = { ok: true; name: string; keys: number; seq: number };
