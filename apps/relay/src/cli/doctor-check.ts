/** One line of `svc relay doctor`: what was checked, how it stands, and how to fix it when it does not. */
export type DoctorStatus = 'ok' | 'warn' | 'error';
export type DoctorCheck = { id: string; status: DoctorStatus; summary: string; fix?: string };
